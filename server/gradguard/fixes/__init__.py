"""Fixes, above the analysis: the one way in for everything that fixes code.

``fix_of`` renders a hazard's plan (which the analysis records as data while it runs)
as text edits; ``fix_text``, ``fix_cells`` and ``fix_files`` apply every fix to a file,
a notebook's cells or the files of a run, again until nothing is left to fix; the
language server's fix-all and ``gradguard check --fix`` both go through them, so the
editor and the command line agree."""

from gradguard.fixes.apply import (
    FixRefused,
    FixResult,
    apply_checked,
    apply_edits,
    apply_fix,
    changes_only_edited_lines,
    combine,
    fix_cells,
    fix_files,
    fix_text,
    fix_texts,
    overlaps,
)
from gradguard.fixes.edits import fix_of

__all__ = ["FixRefused", "FixResult", "apply_checked", "apply_edits", "apply_fix",
           "changes_only_edited_lines", "combine", "fix_cells", "fix_files", "fix_of",
           "fix_text", "fix_texts", "overlaps"]
