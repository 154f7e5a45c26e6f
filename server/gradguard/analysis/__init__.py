"""Static analysis: pure functions from Python source text to in-place hazards
(``analyze_source`` in :mod:`gradguard.analysis.analyze`; hazards in
:mod:`gradguard.analysis.hazard`)."""
