"""One case file per rule (``gg001.py`` ... ), each matching its page under docs/rules/.

Each file names its ``RULE`` and holds ``INVALID`` cases (the smallest real code that
triggers the rule, the lines marked) and ``VALID`` ones (the closest code that must not);
some also hold ``QUIET`` ones, whose findings are uncertain warnings only (a save no loss
reaches), not shown unless asked for, and which torch runs to their end.
"""

from tests.rulecases import Case
from tests.rules import gg001, gg002, gg003, gg004, gg005, gg900, gg901

# The hazards, whose cases run through the analysis, the fixes and torch.
HAZARD_FILES = (gg001, gg002, gg003, gg004, gg005)
# The statuses: a file not analysed (GG900) or code skipped (GG901), which only
# ``gradguard check`` of a whole file reports.
STATUS_FILES = (gg900, gg901)
CASE_FILES = HAZARD_FILES + STATUS_FILES
INVALID: list[Case] = [c for module in HAZARD_FILES for c in module.INVALID]
VALID: list[Case] = [c for module in HAZARD_FILES for c in module.VALID]
QUIET: list[Case] = [c for module in HAZARD_FILES for c in getattr(module, "QUIET", [])]
