"""Reading a table of settings (``[tool.gradguard]``, or an editor's settings object)
against the schema of ``settings_schema.py``: each value checked by its kind, keyed by
the setting's key whatever spelling was used.

A bad value is a problem and is skipped, never fatal; callers decide whether a problem
stops them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gradguard.rules import RULES, SEVERITIES, Severity
from gradguard.settings_schema import BY_SPELLING, NOT_SETTINGS, TABLES, Setting, Source

# The code of the diagnostics for blocks that do not parse; it takes a severity too.
SYNTAX_CODE = "syntax"


def read_settings(raw: Mapping[str, Any], source: Source,
                  problems: list[str]) -> dict[str, Any]:
    """The settings of one table that ``source`` may set, checked, by key."""
    values: dict[str, Any] = {}
    _read(raw, "", source, values, problems)
    return values


def _read(raw: Mapping[str, Any], prefix: str, source: Source, values: dict[str, Any],
          problems: list[str]) -> None:
    for name, value in raw.items():
        spelled = prefix + str(name)
        if not prefix and spelled in TABLES:
            if isinstance(value, Mapping):
                _read(value, spelled + ".", source, values, problems)
            else:
                problems.append(f"`{spelled}` must be a table, got {value!r}")
            continue
        setting = BY_SPELLING.get(spelled)
        if source == "client" and spelled in NOT_SETTINGS:
            continue
        if setting is None:
            problems.append(f"unknown setting `{spelled}`")
        elif source not in setting.sources:
            problems.append(f"`{spelled}` is {_where(setting)}")
        else:
            checked = check_value(setting, value, spelled, problems)
            if checked is not None:
                values[setting.key] = checked


def _where(setting: Setting) -> str:
    if "pyproject" in setting.sources:
        return "read from pyproject.toml only"
    if "client" in setting.sources:
        return "read from an editor's settings only"
    return "the VS Code extension's own setting"


def check_value(setting: Setting, value: Any, spelled: str, problems: list[str]) -> Any:
    """The value as the setting's kind holds it, or None (and a problem) when it is not
    one."""
    kind = setting.kind
    if kind == "codes":
        return rule_codes(value, spelled, problems)
    if kind == "severities":
        return severities(value, problems)
    if kind in ("patterns", "entries"):
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(v for v in value if v.strip())
        problems.append(f"`{spelled}` must be a list of strings, got {value!r}")
        return None
    if kind == "bool":
        if isinstance(value, bool):
            return value
        problems.append(f"`{spelled}` must be true or false, got {value!r}")
        return None
    if kind == "choice":
        allowed = [choice.value for choice in setting.choices]
        if value in allowed:
            return value
        problems.append(f"`{spelled}` must be one of {', '.join(allowed)}, got {value!r}")
        return None
    if kind == "text":
        if isinstance(value, str):
            return value.strip()
        problems.append(f"`{spelled}` must be a string, got {value!r}")
        return None
    return _number(setting, value, spelled, problems)


def _number(setting: Setting, value: Any, spelled: str, problems: list[str]) -> Any:
    whole = setting.kind == "whole"
    numeric = isinstance(value, int) if whole else isinstance(value, (int, float))
    if numeric and not isinstance(value, bool) and in_range(setting, value):
        return value if whole else float(value)
    problems.append(f"`{spelled}` must be {describe_range(setting)}, got {value!r}")
    return None


def in_range(setting: Setting, value: float) -> bool:
    return (setting.minimum is None or value >= setting.minimum) and \
        (setting.maximum is None or value <= setting.maximum)


def describe_range(setting: Setting) -> str:
    what = f"a {'whole ' if setting.kind == 'whole' else ''}number of {setting.unit}"
    if setting.minimum is not None and setting.maximum is not None:
        return f"{what} from {setting.minimum:g} to {setting.maximum:g}"
    if setting.minimum is not None:
        return f"{what}, at least {setting.minimum:g}"
    return what


def rule_codes(value: Any, key: str, problems: list[str]) -> frozenset[str] | None:
    """A list of rule codes or prefixes (and ``syntax``), checked against the catalogue."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"`{key}` must be a list of rule codes, got {value!r}")
        return None
    codes = {v.strip().upper() for v in value if v.strip()}
    known = [c for c in codes if c == SYNTAX_CODE.upper()
             or any(rule.startswith(c) for rule in RULES)]
    for code in sorted(codes - set(known)):
        problems.append(f"`{key}`: unknown rule code {code!r} (known: {', '.join(RULES)})")
    return frozenset(SYNTAX_CODE if c == SYNTAX_CODE.upper() else c for c in known)


def severities(value: Any, problems: list[str]) -> dict[str, Severity]:
    """A table from rule code to severity, checked."""
    if not isinstance(value, Mapping):
        problems.append(f"`severity` must be a table from rule code to severity, got {value!r}")
        return {}
    chosen: dict[str, Severity] = {}
    for code, level in value.items():
        code = str(code).strip()
        code = SYNTAX_CODE if code.lower() == SYNTAX_CODE else code.upper()
        if code != SYNTAX_CODE and code not in RULES:
            problems.append(f"`severity`: unknown rule code {code!r}")
        elif level == "info":
            chosen[code] = "information"
        elif level in SEVERITIES:
            chosen[code] = level
        else:
            problems.append(f"`severity.{code}`: {level!r} is not one of "
                            f"{', '.join(SEVERITIES)}")
    return chosen
