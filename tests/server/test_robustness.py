"""Random edit sequences through the server's document model and the incremental analysis.

Each example starts from a small program with findings in a class, a function and the
module's statements, and applies random edits (inserts, deletes, replacements: Python
fragments, half-typed lines, unicode, line ends of every kind, huge lines), sent as LSP
changes in a random position encoding. After every edit:

- the server's text equals the text the edits describe (ranges were read right);
- analysing and building diagnostics raises nothing, and every range sent (diagnostic,
  related location, fix edit, suppression line) lies inside the document;

and at the end, when every block of the final text parses, the incremental results
equal those of a fresh, non-incremental analysis of that text.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from gradguard.analysis.incremental import IncrementalDocument
from gradguard.fixes import fix_of
from gradguard.server.diagnostics import build_outcome, syntax_problems
from gradguard.server.documents import Outcome, TextBuffer, TextUnit
from gradguard.server.positions import Encoding, LineIndex, units
from gradguard.server.settings import Settings

BASE = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.sig = nn.Sigmoid()
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.sig(x)
        return self.relu(x)


def helper():
    x = torch.randn(4, requires_grad=True)
    y = torch.sigmoid(x)
    y.relu_()
    return y


x = torch.randn(4, requires_grad=True)
y = x.exp()
y += 1  # 模型 😀
y.sum().backward()
'''

FRAGMENTS = [
    "\n", "    ", "        ", "(", ")", ":", "[", "]", "'", '"', "'''", '"""', "#", "\\\n",
    "y.relu_()\n", "    y.relu_()\n", "        x = self.relu(x)\n", "z = torch.tanh(x)\n",
    "    y = torch.sigmoid(x)\n", "def helper():\n", "class Net(nn.Module):\n", "if x:\n",
    "else:\n", "@staticmethod\n", "# gradguard: ignore\n", "  # gradguard: ignore[GG001]",
    "模型", "😀", "\t", "\r\n", "\r", "\x0c", "\u2028", "x = (", "def g(:\n",
    "s = '" + "长" * 3000 + "'\n", "a = " + "[" * 40 + "]" * 40 + "\n", "x" * 5000,
]

insert_text = st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12))
edit = st.tuples(st.floats(0, 1), st.integers(0, 40), insert_text,
                 st.sampled_from(["utf-8", "utf-16", "utf-32"]))


def _lsp_change(index: LineIndex, start: int, end: int, new_text: str,
                encoding: Encoding) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        types.Range(index.position_at(start, encoding), index.position_at(end, encoding)),
        new_text)


def _representable(index: LineIndex, offset: int) -> int:
    """An offset a client can name: not between the two halves of a "\r\n"."""
    return index.offset(index.position_at(offset, "utf-32"), "utf-32")


def _inside(index: LineIndex, range_: types.Range, encoding: Encoding) -> bool:
    for position in (range_.start, range_.end):
        if not 0 <= position.line < index.line_count:
            return False
        if not 0 <= position.character <= units(index.line(position.line), encoding):
            return False
    return (range_.start.line, range_.start.character) <= (range_.end.line,
                                                            range_.end.character)


def _check_ranges(outcome: Outcome, index: LineIndex, encoding: Encoding) -> None:
    for diagnostic in outcome.diagnostics["file:///m.py"]:
        assert _inside(index, diagnostic.range, encoding), diagnostic
        for related in diagnostic.related_information or []:
            assert _inside(index, related.location.range, encoding), related
        for line in diagnostic.data.get("lines", []):
            assert 0 <= line < index.line_count
        for fix_edit in diagnostic.data.get("fix", {}).get("edits", []):
            packed = fix_edit["range"]
            range_ = types.Range(types.Position(*packed[:2]), types.Position(*packed[2:]))
            assert _inside(index, range_, encoding), fix_edit


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(edit, min_size=1, max_size=12))
def test_random_edits_never_break_the_server_and_end_where_a_fresh_analysis_does(
        edits: list[tuple[float, int, str, Encoding]]) -> None:
    uri = "file:///m.py"
    unit = TextUnit(uri, None, Settings(), text_buffer=TextBuffer(uri, BASE, 1))
    expected = BASE
    hazards = unit.analysis.update(expected)
    for version, (where, length, new_text, encoding) in enumerate(edits, start=2):
        index = LineIndex(expected)
        start = _representable(index, int(where * len(expected)))
        end = _representable(index, min(len(expected), start + length))
        change = _lsp_change(index, start, end, new_text, encoding)
        expected = expected[:start] + new_text + expected[end:]

        unit.text_buffer.apply([change], version, encoding)
        assert unit.text_buffer.text == expected

        hazards = unit.analysis.update(unit.program())
        problems = syntax_problems(unit.analysis)
        outcome = build_outcome(unit.snapshot(encoding), hazards, problems)
        _check_ranges(outcome, unit.text_buffer.index, encoding)

    fresh = IncrementalDocument(incremental=False, fix_of=fix_of)
    fresh_hazards = fresh.update(expected)
    if not fresh.errors:
        assert hazards == fresh_hazards
