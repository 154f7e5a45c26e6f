"""Static analysis: pure functions from Python source text to in-place hazards."""

from gradguard.analysis.analyze import Selection, SourceError, analyze_source
from gradguard.analysis.hazard import Fix, Hazard, Related, Span, TextEdit

__all__ = ["Fix", "Hazard", "Related", "Selection", "SourceError", "Span", "TextEdit",
           "analyze_source"]
