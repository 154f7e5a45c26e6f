"""The fix engine: the one place fixes are applied to text.

``gradguard check --fix`` and ``--diff``, and the language server's fix-all and quick
fixes, all apply fixes here, so the editor and the command line produce the same text:

- edits land where the analysis meant them, on lines counted as ``gradguard.text``
  counts them (``\\n``, ``\\r\\n``, ``\\r``; never U+2028 or a form feed);
- fixes that overlap are never applied together: the later one waits for the next
  round, after the text is analysed again (``fix_text`` runs up to ``MAX_ROUNDS``);
- new lines get the text's own line break, and a leading BOM is kept;
- a round whose result does not parse, or that changed a line no edit was on, is
  refused and the text is left as it was before it.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from gradguard.analysis.analyze import ProjectRun, Selection, analyze_source
from gradguard.analysis.hazard import Fix, Hazard, TextEdit
from gradguard.analysis.project import read_file
from gradguard.analysis.syntax import SourceError, parse
from gradguard.cells import cells_of_fixed, program_to_fix
from gradguard.fixes.edits import fix_of
from gradguard.text import BOM, Lines, newline_of, split_lines

MAX_ROUNDS = 5

Point = tuple[int, int]  # (line, column), in whichever counting both ranges share


def overlaps(a: tuple[Point, Point], b: tuple[Point, Point]) -> bool:
    """Whether two ranges (start, end) overlap.

    Two inserts at one point overlap too: the order they would land in is a guess.
    """
    (a_start, a_end), (b_start, b_end) = a, b
    if a_start == a_end == b_start == b_end:
        return True
    return a_start < b_end and b_start < a_end


def _range(edit: TextEdit) -> tuple[Point, Point]:
    span = edit.span
    return (span.line, span.column), (span.end_line, span.end_column)


def combine(fixes: Iterable[Fix]) -> list[TextEdit]:
    """The edits of as many fixes as fit together; a fix that overlaps one taken waits."""
    chosen: list[TextEdit] = []
    for fix in fixes:
        edits = [e for e in fix.edits if e not in chosen]
        if any(overlaps(_range(e), _range(c)) for e in edits for c in chosen):
            continue
        chosen.extend(edits)
    return chosen


def apply_edits(text: str, edits: Sequence[TextEdit]) -> str:
    """The text with non-overlapping edits applied (1-based lines and code-point columns,
    as the analysis gives them). Line breaks in the new text become the text's own."""
    lines = Lines(text)
    newline = newline_of(text)
    spans = []
    for edit in edits:
        span = edit.span
        start = lines.offset_of(span.line - 1, span.column - 1)
        end = lines.offset_of(span.end_line - 1, span.end_column - 1)
        new_text = edit.new_text if newline == "\n" else edit.new_text.replace("\n", newline)
        spans.append((start, end, new_text))
    for start, end, new_text in sorted(spans, reverse=True):
        text = text[:start] + new_text + text[end:]
    return text


def changes_only_edited_lines(old: str, new: str, edits: Sequence[TextEdit]) -> bool:
    """Whether every line that differs between ``old`` and ``new`` is one an edit is on.

    The lines are compared as ``gradguard.text`` splits them, the edits' lines are the
    analysis's: an edit that would land on another line than the analysis meant (lines
    counted differently) shows up here.
    """
    touched: set[int] = set()
    for edit in edits:
        touched.update(range(edit.span.line - 1, edit.span.end_line))
    matcher = difflib.SequenceMatcher(None, split_lines(old), split_lines(new), autojunk=False)
    for tag, first, last, _, _ in matcher.get_opcodes():
        if tag == "equal":
            continue
        # An insert between two lines is made by an edit on the line it goes before or
        # after (a new statement ends with a line break, or starts with one).
        lines = range(first, last) if last > first else range(first - 1, first + 1)
        if not any(line in touched for line in lines):
            return False
    return True


class FixRefused(Exception):
    """The fixed text would not parse, or would change lines no fix was on."""


def apply_checked(text: str, edits: Sequence[TextEdit]) -> str:
    """``apply_edits``, refused (``FixRefused``) unless the result parses and changed
    only the lines the edits are on."""
    body, bom = (text[1:], BOM) if text.startswith(BOM) else (text, "")
    candidate = apply_edits(body, edits)
    try:
        parse(candidate)
    except SourceError as error:
        raise FixRefused(f"a fix would not parse ({error})") from None
    if not changes_only_edited_lines(body, candidate, edits):
        raise FixRefused("a fix would change a line it was not meant for")
    return bom + candidate


def apply_fix(text: str, fix: Fix) -> str | None:
    """The text with one fix applied (a quick fix), or None if that is refused."""
    try:
        return apply_checked(text, fix.edits)
    except FixRefused:
        return None


@dataclass(frozen=True)
class FixResult:
    text: str
    fixed: int
    remaining: list[Hazard]
    error: str | None = None


def fix_text(source: str, selection: Selection | None = None) -> FixResult:
    """Apply every fix of one text analysed alone (``analyze_source``: a text of no
    project), re-analysing between rounds (``fix_texts`` on it alone)."""
    key = "<text>"

    def analyse(texts: Mapping[str, str]) -> dict[str, list[Hazard]]:
        return {key: analyze_source(texts[key], selection, fix_of=fix_of)}

    return fix_texts({key: source}, analyse, lambda _: None)[key]


def fix_cells(cells: Sequence[str], selection: Selection | None = None,
              ) -> tuple[FixResult, list[str] | None]:
    """Fix a notebook's code cells (their texts, in order) as one program, the cells'
    order being the order they run in: ``check --fix`` on an ``.ipynb`` and the
    server's fix-all of a notebook. The program is fixed as one text (``fix_text``:
    overlapping fixes wait for the next round, whichever cells they are in) and split
    back into cells; the cells' new texts are None when a fix moved a cell boundary
    (the notebook is then to be left as it was)."""
    result = fix_text(program_to_fix(cells), selection)
    if result.fixed == 0:
        return result, list(cells)
    return result, cells_of_fixed(cells, result.text)


def fix_files(sources: Mapping[str, str], roots: Sequence[str], selection: Selection | None,
              read: Callable[[str], str | None] = read_file,
              read_source: Callable[[str], str | None] = lambda _: None,
              ) -> dict[str, FixResult]:
    """Fix the files ``sources`` (by absolute path) of the project under ``roots``:
    ``check --fix`` and the server's fix-all. Each round's texts are analysed as
    ``check`` analyses the files (``ProjectRun``: one project, each file from its own
    roots), so a hazard found in one file from another file's code counts; only the
    files given are changed (``fix_texts``' ``only_given``), the hazards found in the
    others are returned as left. ``read`` gives the other files' texts to the analysis,
    ``read_source`` to the engine (a BOM is the engine's to keep)."""
    paths = list(sources)

    def analyse(texts: Mapping[str, str]) -> dict[str, list[Hazard]]:
        return ProjectRun(roots, read, selection, texts, fix_of).files(paths)

    return fix_texts(sources, analyse, read_source, only_given=True)


def fix_texts(sources: Mapping[str, str],
              analysis: Callable[[Mapping[str, str]], dict[str, list[Hazard]]],
              read: Callable[[str], str | None],
              only_given: bool = False) -> dict[str, FixResult]:
    """Apply every fix the analysis of a set of texts offers, in rounds, until none is
    left to apply; the result of each file the analysis reported hazards in, by path.

    ``analysis`` is given the current text of every file a round has (without a BOM)
    and returns the hazards by file, in any file of its project: a hazard found from
    one file's code in another file (a loss module writing into what the model saved)
    is fixed in that other file, whose text ``read`` gives, unless ``only_given``: then
    only the files of ``sources`` are changed, and the others' hazards are left (a
    run asked to fix some files must not rewrite others). All files are analysed
    together again after each round, since a fix in one changes what the others find.
    A file whose round is refused (it would not parse, or would change a line no fix
    was on) is put back as it was and fixed no further: a fix must never leave a file
    broken, or touch a line it was not meant for.
    """
    boms: dict[str, str] = {}
    originals: dict[str, str] = {}
    texts: dict[str, str] = {}

    def take(path: str, source: str) -> None:
        boms[path] = BOM if source.startswith(BOM) else ""
        originals[path] = texts[path] = source[len(boms[path]):]

    def held(path: str) -> bool:
        """Whether the file's text is held, reading it on first use."""
        if path not in texts:
            text = read(path)
            if text is None:
                return False
            take(path, text)
        return True

    for path, source in sources.items():
        take(path, source)
    fixed: dict[str, int] = {}
    refused: dict[str, str] = {}
    hazards = analysis(texts)
    for _ in range(MAX_ROUNDS):
        changed = {}
        for path, found in hazards.items():
            edits = combine(h.fix for h in found if h.fix is not None)
            if not edits or path in refused or not held(path) or \
                    (only_given and path not in sources):
                continue
            try:
                changed[path] = apply_checked(texts[path], edits)
            except FixRefused as error:
                refused[path] = f"{error}; file left untouched"
                changed[path] = originals[path]
        if not changed:
            break
        before = hazards
        texts.update(changed)
        hazards = analysis(texts)
        for path in changed:
            gone = len(before.get(path, [])) - len(hazards.get(path, []))
            fixed[path] = 0 if path in refused else fixed.get(path, 0) + max(gone, 0)
    for path in hazards:  # those reported with nothing to fix too
        held(path)
    return {path: FixResult(boms[path] + text, fixed.get(path, 0), hazards.get(path, []),
                            refused.get(path))
            for path, text in texts.items()}


__all__ = ["FixRefused", "FixResult", "apply_checked", "apply_edits", "apply_fix",
           "changes_only_edited_lines", "combine", "fix_cells", "fix_files", "fix_text",
           "fix_texts",
           "overlaps"]
