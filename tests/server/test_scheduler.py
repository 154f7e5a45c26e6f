"""When analyses run: at once after a pause, once per burst, never published stale."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types

from gradguard.analysis import incremental
from gradguard.server.documents import Outcome, TextBuffer, TextUnit, Unit
from gradguard.server.scheduler import Scheduler
from gradguard.server.settings import Settings

pytestmark = pytest.mark.asyncio

PROGRAM = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.sig = nn.Sigmoid()
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.sig(x)
        return self.relu(x)

    def other(self, x):
        return x


class Unrelated(nn.Module):
    def forward(self, x):
        return x * 2


def helper():
    x = torch.randn(4, requires_grad=True)
    y = torch.sigmoid(x)
    y.relu_()
    return y
'''


class Recorder:
    def __init__(self) -> None:
        self.outcomes: list[Outcome] = []
        self.arrived = asyncio.Event()

    def __call__(self, unit: Unit, outcome: Outcome) -> None:
        self.outcomes.append(outcome)
        self.arrived.set()

    async def until_version(self, version: int) -> Outcome:
        async def wait() -> Outcome:
            while not self.outcomes or self.outcomes[-1].version < version:
                self.arrived.clear()
                await self.arrived.wait()
            return self.outcomes[-1]

        return await asyncio.wait_for(wait(), 20)


def _unit(debounce_ms: int = 75) -> TextUnit:
    uri = "file:///net.py"
    return TextUnit(uri, None, Settings(debounce_ms=debounce_ms),
                    text_buffer=TextBuffer(uri, PROGRAM, 1))


def _type(unit: TextUnit, text: str, line: int, column: int) -> None:
    at = types.Position(line, column)
    unit.text_buffer.apply([types.TextDocumentContentChangePartial(types.Range(at, at), text)],
                           unit.version + 1, "utf-16")


async def test_an_edit_in_one_method_re_runs_only_that_classs_roots(
        monkeypatch: pytest.MonkeyPatch) -> None:
    run_root = incremental.run_root
    ran: list[str] = []

    def recording_run_root(programs: Any, root: Any, summaries: Any) -> Any:
        ran.append(root.key)
        return run_root(programs, root, summaries)

    monkeypatch.setattr(incremental, "run_root", recording_run_root)
    recorder = Recorder()
    scheduler = Scheduler(recorder)
    unit = _unit()
    scheduler.edited(unit, "utf-16")
    await recorder.until_version(1)
    everything = list(ran)

    await asyncio.sleep(0.1)  # a pause: the next edit is analysed at once
    _type(unit, " ", 11, len("        x = self.sig(x)"))
    scheduler.edited(unit, "utf-16")
    outcome = await recorder.until_version(2)

    again = ran[len(everything):]
    assert any("Unrelated" in key for key in everything)
    assert any("helper" in key for key in everything)
    assert again and all("Net" in key and "Unrelated" not in key for key in again)
    assert [d.code for d in outcome.diagnostics[unit.key]] == ["GG001", "GG001"]
    scheduler.shutdown()


async def test_an_isolated_keystroke_after_a_quiet_spell_is_analysed_at_once() -> None:
    recorder = Recorder()
    scheduler = Scheduler(recorder)
    unit = _unit(debounce_ms=60_000)  # a wait for quiet would outlast the test
    scheduler.edited(unit, "utf-16")
    await recorder.until_version(1)
    unit.last_change -= 60  # a minute of quiet

    _type(unit, "#", 14, 0)
    scheduler.edited(unit, "utf-16")
    outcome = await recorder.until_version(2)

    assert [o.version for o in recorder.outcomes] == [1, 2] and outcome.version == 2
    scheduler.shutdown()


async def test_a_burst_of_keystrokes_is_analysed_once_after_it_ends() -> None:
    recorder = Recorder()
    scheduler = Scheduler(recorder)
    unit = _unit(debounce_ms=500)
    scheduler.edited(unit, "utf-16")
    await recorder.until_version(1)

    # Each keystroke comes within the debounce delay of the one before: none is analysed
    # until the document has been quiet for the delay.
    unit.last_change = asyncio.get_running_loop().time()
    for offset, char in enumerate("# a comment typed fast"):
        _type(unit, char, 14, offset)
        scheduler.edited(unit, "utf-16")
        await asyncio.sleep(0.005)
    last = unit.version
    await recorder.until_version(last)

    assert [o.version for o in recorder.outcomes] == [1, last]
    assert scheduler.analyses_run == 2
    scheduler.shutdown()


async def test_an_analysis_made_stale_by_a_newer_version_is_not_published() -> None:
    recorder = Recorder()
    scheduler = Scheduler(recorder)
    unit = _unit(debounce_ms=0)
    scheduler.edited(unit, "utf-16")
    # Version 2 arrives before the analysis of version 1 is done.
    _type(unit, "\n", 0, 0)
    scheduler.edited(unit, "utf-16")

    outcome = await recorder.until_version(2)

    assert [o.version for o in recorder.outcomes] == [2]
    assert unit.is_current(outcome)
    scheduler.shutdown()


async def test_waiting_for_the_current_outcome_returns_the_latest_version() -> None:
    recorder = Recorder()
    scheduler = Scheduler(recorder)
    unit = _unit()
    scheduler.edited(unit, "utf-16")
    _type(unit, "\n", 0, 0)
    scheduler.edited(unit, "utf-16")

    outcome = await asyncio.wait_for(unit.current(), 20)

    assert outcome is not None and outcome.version == 2
    scheduler.shutdown()
