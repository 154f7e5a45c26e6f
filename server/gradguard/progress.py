"""How far a long run has got, on the terminal: ``check``'s files, ``probe``'s targets.

Drawn (by rich) on stderr only when stderr is a terminal, and only once the run has
taken ``SHOW_AFTER`` seconds: a quick run, a pipe, a CI log or an editor's task output
see nothing, and stdout (the findings as text, JSON, SARIF or GitHub annotations) is
never touched. The bar is erased when the run ends, before the findings are printed.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

# A run shorter than this shows nothing.
SHOW_AFTER = 1.0
# ``check`` names the file being analysed once it has taken this long (most take a
# fraction of a second; naming each would only flicker).
NAME_AFTER = 2.0


class Progress:
    """``done`` of ``total`` items and which are running, shown as described above.

    ``started`` and ``finished`` may be called from any thread."""

    def __init__(self, stream: TextIO, total: int, noun: str, done: int = 0,
                 name_after: float = NAME_AFTER) -> None:
        self.total = total
        self.done = done
        self.name_after = name_after
        self.since = time.monotonic()
        self._stream = stream
        self._noun = noun
        self._running: dict[str, float] = {}
        self._finished: set[str] = set()
        self._lock = threading.Lock()  # the counts and names
        self._showing = threading.Lock()  # starting and stopping the bar
        self._closed = False
        self._bar: RichProgress | None = None
        self._task: TaskID | None = None
        self._timer: threading.Timer | None = None
        if self.drawn:
            self._timer = threading.Timer(SHOW_AFTER, self._show)
            self._timer.daemon = True
            self._timer.start()

    @property
    def drawn(self) -> bool:
        """Whether it is drawn if the run lasts (stderr is a terminal, there is work)."""
        return self._stream.isatty() and self.done < self.total

    def started(self, name: str) -> None:
        with self._lock:
            self._running.setdefault(name, time.monotonic())
            bar = self._bar if self.name_after <= 0 else None
        if bar is not None:  # named at once, not at the next refresh: it may end first
            bar.refresh()

    def finished(self, name: str) -> None:
        with self._lock:
            self._running.pop(name, None)
            if name in self._finished:  # a file checked again after a crash counts once
                return
            self._finished.add(name)
            self.done += 1
            done, bar = self.done, self._bar
        # Outside our lock: rich draws holding its own and asks ``running`` for ours.
        if bar is not None and self._task is not None:
            bar.update(self._task, completed=done)

    def running(self) -> str:
        """The item running longest, with its time, once it has run ``name_after``."""
        with self._lock:
            if not self._running:
                return ""
            name, since = min(self._running.items(), key=lambda item: item[1])
        seconds = time.monotonic() - since
        return f"{name} ({seconds:.0f} s)" if seconds >= self.name_after else ""

    def _show(self) -> None:
        with self._showing:
            if self._closed:
                return
            # rich is imported here, on the timer's thread: a short run never pays for it.
            bar, task = _bar(self._stream, self, self._noun)
            with self._lock:
                self._bar, self._task = bar, task
                done = self.done
            bar.update(task, completed=done)  # what finished while rich was imported
            bar.start()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._showing:  # not while the timer is starting the bar
            self._closed = True
            with self._lock:
                bar, self._bar = self._bar, None
        if bar is not None:
            bar.stop()  # erases it (``transient``)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


def _bar(stream: TextIO, progress: Progress, noun: str) -> tuple[RichProgress, TaskID]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn, Task, TextColumn
    from rich.progress import Progress as RichProgress
    from rich.text import Text

    class Elapsed(ProgressColumn):
        # Since the run began, not since the bar appeared.
        def render(self, task: Task) -> Text:
            seconds = int(time.monotonic() - progress.since)
            return Text(f"{seconds // 3600}:{seconds // 60 % 60:02}:{seconds % 60:02}",
                        style="progress.elapsed")

    class Running(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(progress.running(), overflow="ellipsis", no_wrap=True)

    bar = RichProgress(TextColumn("gradguard"), BarColumn(), MofNCompleteColumn(),
                       TextColumn(noun), Elapsed(), Running(),
                       console=Console(file=stream), transient=True, refresh_per_second=4)
    return bar, bar.add_task("", total=progress.total, completed=progress.done)
