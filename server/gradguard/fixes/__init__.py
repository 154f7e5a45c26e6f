"""Applying fixes to text (``apply``): above the analysis, which plans them and renders
their edits; used by ``gradguard check --fix`` and the language server alike."""
