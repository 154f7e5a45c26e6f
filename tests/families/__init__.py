"""One case file per family of issue 16 ("Static recall 90%"): ``f1_...py`` to
``f9_...py``, each with its ``FAMILY`` number (tests/corpus/manifest.csv's ``family``),
``INVALID`` cases (the smallest real code that triggers the family's hazard, the lines
marked) and ``VALID`` ones (the closest code that must not). A case GradGuard does not get
right yet is ``missed``: tests/test_families.py holds it as a strict xfail, so that it
fails loudly once it is found.
"""

from tests.families import (
    f1_multi_output_views,
    f2_leaves_requiring_grad,
    f3_training_loop_order,
    f4_savers_not_yet_known,
    f5_aliases,
    f6_flag_dependent_paths,
    f7_sibling_savers,
    f8_contexts,
    f9_data_writes,
)
from tests.rulecases import Case

FAMILY_FILES = (f1_multi_output_views, f2_leaves_requiring_grad, f3_training_loop_order,
                f4_savers_not_yet_known, f5_aliases, f6_flag_dependent_paths,
                f7_sibling_savers, f8_contexts, f9_data_writes)
INVALID: list[Case] = [c for module in FAMILY_FILES for c in module.INVALID]
VALID: list[Case] = [c for module in FAMILY_FILES for c in module.VALID]
