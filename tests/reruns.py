"""How an edit is judged in the incremental tests: the document's hazards must equal a
fresh analysis of the same text, and what counts is how many roots ran again."""

from __future__ import annotations

from gradguard.analysis.hazard import Hazard
from gradguard.analysis.incremental import IncrementalDocument


def fresh(text: str) -> list[Hazard]:
    return IncrementalDocument(incremental=False).update(text)


def reruns(document: IncrementalDocument, text: str) -> int:
    """Analyse ``text`` as the document's next version: how many roots ran again."""
    before = document.roots_run
    hazards = document.update(text)
    assert hazards == fresh(text)
    return document.roots_run - before
