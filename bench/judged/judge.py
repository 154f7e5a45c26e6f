"""What a judging script reports: whether any of its runs of the released code made
torch raise the in-place error at ``backward()``.

Each script under bench/judged/ builds the real module of one report (the pinned
package, a tiny configuration, CPU), runs it the ways the reported code can be reached
(with gradients, and without where the code is a no-gradient path), and calls
:func:`judge` with those runs. It prints one JSON line: ``{"raised": bool, "runs": [...]}``;
bench/real_world_check.py compares ``raised`` with the verdict recorded for the report.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable

INPLACE_ERROR = "modified by an inplace operation"


def judge(**runs: Callable[[], None]) -> None:
    outcomes = []
    for name, run in runs.items():
        try:
            run()
        except RuntimeError as error:
            if INPLACE_ERROR not in str(error):
                raise
            outcomes.append({"run": name, "raised": True, "error": str(error).splitlines()[0]})
        except Exception:  # noqa: BLE001 - a run that cannot be built judges nothing
            outcomes.append({"run": name, "failed": traceback.format_exc(limit=2)})
            continue
        else:
            outcomes.append({"run": name, "raised": False})
    if any("failed" in outcome for outcome in outcomes):
        print(json.dumps({"raised": None, "runs": outcomes}))
        return
    print(json.dumps({"raised": any(o["raised"] for o in outcomes), "runs": outcomes}))
