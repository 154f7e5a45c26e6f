"""Settings: nearest pyproject.toml, then initializationOptions, then the client's."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradguard.checking.discovery import Patterns
from gradguard.server.settings import (
    DEFAULT_DEBOUNCE_MS,
    SettingsResolver,
    parse_layer,
)


def _project(folder: Path, table: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(f"[tool.gradguard]\n{table}\n", "utf-8")
    return folder


def test_defaults_report_every_rule_at_its_own_severity(tmp_path: Path) -> None:
    settings = SettingsResolver().resolve(str(tmp_path / "model.py"))

    assert settings.select is None and settings.ignore == frozenset()
    assert settings.severity_of("GG001", "warning") == "warning"
    assert settings.debounce_ms == DEFAULT_DEBOUNCE_MS
    assert settings.incremental


def test_the_nearest_pyproject_with_a_gradguard_table_wins(tmp_path: Path) -> None:
    _project(tmp_path, 'ignore = ["GG002"]')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    _project(tmp_path / "sub", 'select = ["GG001"]')
    resolver = SettingsResolver()

    assert resolver.resolve(str(tmp_path / "pkg" / "a.py")).ignore == {"GG002"}
    assert resolver.resolve(str(tmp_path / "sub" / "a.py")).select == {"GG001"}


def test_editor_settings_override_pyproject_per_workspace_folder(tmp_path: Path) -> None:
    _project(tmp_path / "one", '[tool.gradguard.severity]\nGG001 = "hint"\nGG002 = "hint"')
    _project(tmp_path / "two", "")
    resolver = SettingsResolver()
    resolver.folders = [str(tmp_path / "one"), str(tmp_path / "two")]
    problems: list[str] = []
    resolver.initialization = parse_layer({"severity": {"GG001": "warning"}}, None, "init",
                                          problems)
    resolver.client_folders = {
        str(tmp_path / "two"): parse_layer({"ignore": ["GG003"]}, None, "two", problems)}

    one = resolver.resolve(str(tmp_path / "one" / "m.py"))
    two = resolver.resolve(str(tmp_path / "two" / "m.py"))

    assert problems == []
    assert one.severity == {"GG001": "warning", "GG002": "hint"}
    assert one.ignore == frozenset()
    assert two.ignore == {"GG003"}


def test_an_edited_pyproject_is_read_again(tmp_path: Path) -> None:
    _project(tmp_path, 'ignore = ["GG001"]')
    resolver = SettingsResolver()
    assert resolver.resolve(str(tmp_path / "m.py")).ignore == {"GG001"}

    (tmp_path / "pyproject.toml").write_text('[tool.gradguard]\nignore = ["GG002", "GG003"]\n')

    assert resolver.resolve(str(tmp_path / "m.py")).ignore == {"GG002", "GG003"}


@pytest.mark.parametrize(("pattern", "path", "excluded"), [
    ("tests", "tests/test_model.py", True),
    ("*_pb2.py", "proto/model_pb2.py", True),
    ("build/**", "build/lib/model.py", True),
    ("third_party/**/*.py", "third_party/a/b/model.py", True),
    ("third_party/*.py", "third_party/a/model.py", False),
    ("tests", "src/model.py", False),
])
def test_client_exclude_patterns_are_relative_to_their_folder(
        tmp_path: Path, pattern: str, path: str, excluded: bool) -> None:
    assert Patterns.of(tmp_path, [pattern]).cover(tmp_path / path) is excluded


def test_a_client_exclude_pattern_never_matches_outside_its_folder(tmp_path: Path) -> None:
    assert not Patterns.of(tmp_path / "a", ["**"]).cover(tmp_path / "b" / "m.py")


def test_bad_values_are_reported_and_skipped_not_fatal() -> None:
    problems: list[str] = []
    layer = parse_layer({"select": "GG001", "ignore": ["GG001", "XX9"],
                         "severity": {"GG001": "loud"}, "debounceMs": -1, "colour": 1},
                        None, "client settings", problems)

    assert layer == {"ignore": {"GG001"}, "severity": {}}
    assert len(problems) == 5
    assert all(p.startswith("client settings: ") for p in problems)


def test_a_pyproject_that_is_not_toml_is_reported(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.gradguard\n")
    resolver = SettingsResolver()

    assert resolver.resolve(str(tmp_path / "m.py")).ignore == frozenset()
    assert "cannot read" in " ".join(resolver.take_problems())


def test_an_editor_sending_an_empty_ignore_list_keeps_the_projects_ignores(
        tmp_path: Path) -> None:
    _project(tmp_path, 'ignore = ["GG001"]\nselect = ["GG00"]')
    resolver = SettingsResolver()
    problems: list[str] = []
    # What the VS Code client sends by default (and keys the probe reads).
    resolver.client_global = parse_layer(
        {"ignore": [], "severity": {}, "exclude": [], "probe": {"onSave": False},
         "trusted": True}, str(tmp_path), "client settings", problems)

    settings = resolver.resolve(str(tmp_path / "m.py"))

    assert problems == []
    assert settings.ignore == {"GG001"}
    assert settings.select == {"GG00"}


def test_probe_settings_come_from_the_client_and_the_pyprojects_probe_table_is_left_to_it(
        tmp_path: Path) -> None:
    _project(tmp_path, '[tool.gradguard.probe]\nentries = ["m.py::step"]\ntimeout = 5')
    resolver = SettingsResolver()
    problems: list[str] = []
    resolver.client_global = parse_layer({"probe": {"onSave": True, "timeout": 30}},
                                         str(tmp_path), "client settings", problems)

    settings = resolver.resolve(str(tmp_path / "m.py"))

    assert problems == [] and resolver.take_problems() == []
    assert settings.probe_on_save is True
    assert settings.probe_timeout == 30.0


def test_bad_probe_settings_are_reported_and_skipped() -> None:
    problems: list[str] = []

    layer = parse_layer({"probe": {"onSave": "yes", "timeout": -1, "speed": 2}}, None,
                        "client settings", problems)

    assert layer == {}
    assert len(problems) == 3 and "probe.speed" in problems[2]


def test_diagnostic_mode_is_open_files_only_unless_the_client_asks_for_the_workspace() -> None:
    problems: list[str] = []
    resolver = SettingsResolver()

    assert resolver.resolve(None).diagnostic_mode == "openFilesOnly"
    resolver.initialization = parse_layer({"diagnosticMode": "workspace"}, None,
                                          "initializationOptions", problems)
    assert resolver.resolve(None).diagnostic_mode == "workspace"
    assert problems == []


def test_a_bad_diagnostic_mode_is_reported_and_skipped() -> None:
    problems: list[str] = []

    layer = parse_layer({"diagnosticMode": "everything"}, None, "client settings", problems)

    assert layer == {}
    assert problems == ["client settings: `diagnosticMode` must be one of openFilesOnly, "
                        "workspace, got 'everything'"]
