"""The settings schema (gradguard/settings_schema.py) is the one declaration of every
setting: each spelling names one setting, each default is a value of its own kind, and
the VS Code extension's settings (client/package.json, client/src/settingsSchema.ts) are
generated from it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from gradguard.config import parse_table
from gradguard.server.settings import parse_layer
from gradguard.settings_read import check_value
from gradguard.settings_schema import SETTINGS, Setting

ROOT = Path(__file__).resolve().parent.parent


def test_each_spelling_names_one_setting() -> None:
    spellings = Counter(spelling for setting in SETTINGS for spelling in setting.spellings)
    assert [spelling for spelling, count in spellings.items() if count > 1] == []


@pytest.mark.parametrize("setting", [s for s in SETTINGS if s.default is not None],
                         ids=lambda s: s.key)
def test_each_default_is_a_value_of_its_kind(setting: Setting) -> None:
    problems: list[str] = []
    value = list(setting.default) if isinstance(setting.default, tuple) else setting.default
    check_value(setting, value, setting.key, problems)
    assert problems == []


def _nested(key: str, value: object) -> dict[str, object]:
    head, _, rest = key.partition(".")
    return {head: _nested(rest, value) if rest else value}


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.key)
def test_pyproject_and_the_server_take_what_the_schema_says_they_take(
        setting: Setting, tmp_path: Path) -> None:
    value = list(setting.default) if isinstance(setting.default, tuple) else setting.default
    raw = _nested(setting.key, [] if value is None else value)

    pyproject = parse_table(raw, None).problems
    client: list[str] = []
    parse_layer(raw, str(tmp_path), "client", client)

    assert (pyproject == ()) is ("pyproject" in setting.sources)
    assert (client == []) is ("client" in setting.sources)


def test_the_vs_code_extensions_settings_are_generated_from_the_schema() -> None:
    done = subprocess.run([sys.executable, "tools/generate_client_settings.py", "--check"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_package_json_contributes_exactly_the_schemas_vs_code_settings() -> None:
    manifest = json.loads((ROOT / "client" / "package.json").read_text(encoding="utf-8"))
    properties = manifest["contributes"]["configuration"]["properties"]

    assert list(properties) == [f"gradguard.{s.key}" for s in SETTINGS if s.in_vscode]
    timeout = properties["gradguard.probe.timeout"]
    assert (timeout["default"], timeout["minimum"], timeout["maximum"]) == (60, 1, 3600)
