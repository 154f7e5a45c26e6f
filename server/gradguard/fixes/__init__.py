"""Fix code, above the analysis: ``edits`` turns the fix plan the analysis recorded at a
finding into text edits of the source (``fix_of``, handed to the analysis by whoever
wants hazards with their fixes), and ``apply`` is the fix engine, the one way fixes are
applied to text (``gradguard check --fix`` and the language server alike)."""
