"""Checking a tree of files, for ``gradguard check`` and the language server's workspace
diagnostics alike: which files (``discovery``), reading them (``files``, ``notebook``),
their results kept between runs (``cache``) and the analysis in worker processes
(``workers``, ``results``)."""
