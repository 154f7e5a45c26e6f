"""Probe findings tied to the code they were found in, and what "probe this file" runs."""

from __future__ import annotations

import os
from pathlib import Path

from gradguard.analysis.blocks import split_blocks
from gradguard.probe.config import ProbeConfig
from gradguard.probe.target import ProbeTarget, parse_target
from gradguard.server.probe_marks import ProbeStore, marks_of, place
from gradguard.server.probe_targets import AUTO, SCRIPT, probe_lenses, targets_for

PROBED = '''import torch


def main():
    y = torch.sigmoid(torch.randn(3, requires_grad=True))
    y.relu_()
    y.sum().backward()
'''


def finding(path: str, line: int, saved_at: int, **changes: object) -> dict[str, object]:
    record: dict[str, object] = {
        "path": path, "line": line, "column": 5, "end_line": line, "end_column": 14,
        "code": "GG001", "severity": "error", "message": "`relu_` overwrites ...",
        "related": [{"path": path, "line": saved_at, "column": 9, "message": "saved here"}],
        "torch_error": "one of the variables needed ...",
    }
    record.update(changes)
    return record


def test_a_mark_follows_its_block_when_lines_are_added_above_it() -> None:
    path = os.path.abspath("probed.py")
    (mark,) = marks_of("probed.py", [finding(path, 6, 5)], {path: PROBED})

    now = "import os\n\n" + PROBED
    (placed,) = place([mark], split_blocks(now))

    assert (placed.span.line, placed.span.column) == (8, 5)
    assert [r.line for r in placed.related] == [7]


def test_a_mark_follows_lines_added_above_it_inside_its_own_block() -> None:
    path = os.path.abspath("probed.py")
    (mark,) = marks_of("probed.py", [finding(path, 6, 5)], {path: PROBED})

    now = PROBED.replace("    y = torch.sigmoid",
                         "    torch.manual_seed(0)\n\n    y = torch.sigmoid")
    (placed,) = place([mark], split_blocks(now))

    assert (placed.span.line, placed.stale) == (8, False)
    assert [r.line for r in placed.related] == [7]


def test_an_edit_of_the_flagged_line_marks_it_stale_where_it_is() -> None:
    path = os.path.abspath("probed.py")
    marks = marks_of("probed.py", [finding(path, 6, 5)], {path: PROBED})

    (placed,) = place(marks, split_blocks(PROBED.replace("y.relu_()", "y = y.relu()")))

    assert (placed.span.line, placed.stale) == (6, True)


def test_an_edit_elsewhere_leaves_it_fresh_and_a_deleted_line_takes_it_away() -> None:
    path = os.path.abspath("probed.py")
    marks = marks_of("probed.py", [finding(path, 6, 5)], {path: PROBED})

    (placed,) = place(marks, split_blocks(PROBED.replace("y.sum()", "y.mean()")))
    assert (placed.span.line, placed.stale) == (6, False)
    assert place(marks, split_blocks(PROBED.replace("    y.relu_()\n", ""))) == []
    assert place(marks, split_blocks("import torch\n")) == []


def test_the_line_the_message_quotes_follows_the_saving_line() -> None:
    path = os.path.abspath("probed.py")
    record = finding(path, 6, 5, message="`relu_` overwrites the output of `sigmoid`, "
                                         "saved for backward at line 5 (version 0 -> 1)")
    (mark,) = marks_of("probed.py", [record], {path: PROBED})

    (same,) = place([mark], split_blocks(PROBED))
    now = PROBED.replace("    y = torch.sigmoid", "    # squash\n    y = torch.sigmoid")
    (moved,) = place([mark], split_blocks(now))

    assert same.message == record["message"]
    assert moved.message == ("`relu_` overwrites the output of `sigmoid`, saved for backward "
                             "at line 6 (version 0 -> 1)")
    assert (moved.span.line, [r.line for r in moved.related]) == (7, [6])


def test_braces_in_a_message_survive_and_lines_of_other_files_are_not_rewritten() -> None:
    path = os.path.abspath("probed.py")
    record = finding(path, 6, 5, message="`x[{0}]` ... saved at line 40 of a dict {'a': 1}",
                     related=[{"path": "/elsewhere/helpers.py", "line": 40, "column": 1,
                               "message": "saved here"}])
    (mark,) = marks_of("probed.py", [record], {path: PROBED})

    (placed,) = place([mark], split_blocks("\n" + PROBED))

    assert placed.message == record["message"]


def test_findings_outside_the_files_read_or_with_unknown_codes_are_dropped() -> None:
    path = os.path.abspath("probed.py")
    elsewhere = os.path.abspath("other.py")
    findings = [finding(elsewhere, 6, 5), finding(path, 6, 5, code="GG999"),
                finding(path, 60, 5)]

    assert marks_of("probed.py", findings, {path: PROBED}) == []


def test_a_related_line_in_a_file_not_read_is_kept_as_it_was() -> None:
    path = os.path.abspath("probed.py")
    record = finding(path, 6, 5, related=[{"path": "/elsewhere/helpers.py", "line": 40,
                                           "column": 12, "message": "saved here"}])
    (mark,) = marks_of("probed.py", [record], {path: PROBED})

    (placed,) = place([mark], split_blocks("\n" + PROBED))

    assert [(r.path, r.line) for r in placed.related] == [("/elsewhere/helpers.py", 40)]


def test_the_store_keeps_the_last_run_of_each_target_per_file() -> None:
    path = os.path.abspath("probed.py")
    store = ProbeStore()
    first = marks_of("probed.py", [finding(path, 6, 5)], {path: PROBED})
    second = marks_of("probed.py::main", [finding(path, 6, 5)], {path: PROBED})

    assert store.record("probed.py", first) == {path}
    assert store.record("probed.py::main", second) == {path}
    assert len(store.for_path(path)) == 2
    assert store.record("probed.py", []) == {path}
    assert [m.target for m in store.for_path(path)] == ["probed.py::main"]


SCRIPT_AND_MODULES = '''import torch.nn as nn


class Block(nn.Module):
    pass


@some_decorator
class Wide(Block):
    pass


class Plain:
    pass


def step():
    pass


if __name__ == "__main__":
    step()
'''


def test_probing_a_file_runs_its_entries_else_its_script_else_its_modules(
        tmp_path: Path) -> None:
    path = str(tmp_path / "train.py")
    config = ProbeConfig(str(tmp_path), (parse_target("train.py::step"),))

    assert targets_for(path, None, SCRIPT_AND_MODULES, config) == [ProbeTarget(path, "step")]
    assert targets_for(path, None, SCRIPT_AND_MODULES, None) == [ProbeTarget(path)]
    assert targets_for(path, None, "class Block(nn.Module): pass\n", None) == \
        [ProbeTarget(path, auto=True)]
    assert targets_for(path, "Block", SCRIPT_AND_MODULES, None) == [ProbeTarget(path, "Block")]
    assert targets_for(path, SCRIPT, "", None) == [ProbeTarget(path)]
    assert targets_for(path, AUTO, "", None) == [ProbeTarget(path, auto=True)]


def test_lenses_sit_on_module_classes_entries_and_the_main_block_only(tmp_path: Path) -> None:
    path = str(tmp_path / "train.py")
    config = ProbeConfig(str(tmp_path), (parse_target("train.py::step"),))

    lenses = probe_lenses(SCRIPT_AND_MODULES, path, config)

    assert [(lens.line + 1, lens.name) for lens in lenses] == [
        (4, "Block"), (9, "Wide"), (17, "step"), (21, SCRIPT)]
