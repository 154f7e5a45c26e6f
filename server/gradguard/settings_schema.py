"""Every setting of GradGuard, declared once: its key, the other spellings accepted, the
kind of value it takes (and its range or choices), its default, where it can be set,
which front ends act on it, and what it does.

Everything else follows from this table: ``config.py`` checks ``[tool.gradguard]`` with
it, the language server checks its client's settings with it (``server/settings.py``),
the probe takes its defaults from it, and ``tools/generate_client_settings.py`` writes the
VS Code extension's ``contributes.configuration`` (client/package.json) and its constants
(client/src/settingsSchema.ts) from it. It imports nothing of GradGuard, so that the
probe's child process reads it cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

# What a value must be. `codes`: rule codes or prefixes; `severities`: a table from a
# rule code to a severity; `patterns`: gitignore-style patterns; `entries`: probe
# targets (parsed by the probe).
Kind = Literal["bool", "whole", "seconds", "choice", "text", "codes", "severities",
               "patterns", "entries"]
# Where a value can come from: `[tool.gradguard]` of pyproject.toml, or an editor's
# settings as the language server is sent them (initializationOptions,
# workspace/configuration, workspace/didChangeConfiguration).
Source = Literal["pyproject", "client"]
# Who acts on it. `vscode`: the VS Code extension itself (and it contributes the setting
# in its package.json).
FrontEnd = Literal["check", "probe", "server", "vscode"]

PYPROJECT: frozenset[Source] = frozenset({"pyproject"})
CLIENT: frozenset[Source] = frozenset({"client"})
EVERYWHERE: frozenset[Source] = frozenset({"pyproject", "client"})
# The VS Code extension's own settings are not sent to the server.
NOWHERE: frozenset[Source] = frozenset()


@dataclass(frozen=True)
class Choice:
    value: str
    description: str = ""


@dataclass(frozen=True)
class Setting:
    key: str  # as an editor's settings spell it; a dot is a nested table
    kind: Kind
    default: Any
    description: str  # Markdown, as VS Code shows it
    sources: frozenset[Source]
    read_by: frozenset[FrontEnd]
    aliases: tuple[str, ...] = ()  # other spellings (pyproject's snake and kebab case)
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Choice, ...] = ()
    unit: str = ""  # of a number: what the problem message calls it
    # VS Code's scope: "resource" settings can differ per folder, "window" ones cannot.
    vscode_scope: Literal["resource", "window"] = "resource"

    @property
    def spellings(self) -> tuple[str, ...]:
        return (self.key, *self.aliases)

    @property
    def in_vscode(self) -> bool:
        return "vscode" in self.read_by


def _fronts(*names: FrontEnd) -> frozenset[FrontEnd]:
    return frozenset(names)


ANALYSIS = _fronts("check", "server", "vscode")

# In the order VS Code lists them.
SETTINGS: tuple[Setting, ...] = (
    Setting("enable", "bool", True, "Run the GradGuard language server on Python files. "
            "Turning it off stops the server; turning it on starts it.",
            NOWHERE, _fronts("vscode"), vscode_scope="window"),
    Setting("select", "codes", None, "Rule codes (or prefixes such as `GG00`) to report. "
            "Empty: every rule, or what `[tool.gradguard] select` in the nearest "
            "`pyproject.toml` says.",
            EVERYWHERE, _fronts("check", "probe", "server", "vscode")),
    Setting("ignore", "codes", (), "Rule codes (or prefixes) never to report, e.g. "
            "`[\"GG004\"]`. `syntax` hides the diagnostics of code that does not parse.",
            EVERYWHERE, _fronts("check", "probe", "server", "vscode")),
    Setting("severity", "severities", {}, "Severity overrides per rule code, e.g. "
            "`{\"GG002\": \"warning\"}`: `error`, `warning`, `information` or `hint`.",
            EVERYWHERE, _fronts("check", "probe", "server", "vscode")),
    Setting("exclude", "patterns", None, "Files not to analyse, as gitignore patterns "
            "relative to the workspace folder (or, in `pyproject.toml`, to its folder), "
            "e.g. `[\"third_party/\"]`. In `pyproject.toml` it replaces the default list "
            "(ruff's: `.venv`, `build`, `node_modules`...); `extend-exclude` adds to it.",
            EVERYWHERE, ANALYSIS),
    Setting("extend-exclude", "patterns", (), "Patterns excluded on top of `exclude`.",
            PYPROJECT, _fronts("check", "server")),
    Setting("include", "patterns", ("*.py", "*.ipynb"), "Which files of a folder are "
            "analysed, as gitignore patterns.",
            PYPROJECT, _fronts("check", "server")),
    Setting("uncertain", "bool", False, "Also report hazards that hold only if a tensor of "
            "unknown origin (a function argument, say) requires grad, as warnings (like "
            "`gradguard check --uncertain`). Off: `[tool.gradguard] uncertain` in "
            "`pyproject.toml` decides.",
            EVERYWHERE, ANALYSIS),
    Setting("interpreter", "text", "", "Python interpreter that runs the server "
            "(`<interpreter> -m gradguard serve`) and must have `gradguard` installed. "
            "Empty: the interpreter selected in the Python extension, else "
            "`python.defaultInterpreterPath`, else a trusted workspace's `.venv` or `venv`, "
            "else `python3` (the `py` launcher on Windows) on PATH. A virtual environment's "
            "folder stands for its interpreter. `${workspaceFolder}`, "
            "`${userHome}`, `${env:NAME}` and `~` are expanded; a relative path is relative "
            "to the first workspace folder. Changing it restarts the server.",
            NOWHERE, _fronts("vscode")),
    Setting("importStrategy", "choice", "useBundled", "Which GradGuard runs. `useBundled` "
            "(default): the copy inside the extension, nothing to install; the interpreter "
            "(see `#gradguard.interpreter#`) still runs it and the probe, so the probe sees "
            "the interpreter's torch. `fromEnvironment`: the version installed in the "
            "interpreter (for a pinned or development version); when it is missing, "
            "*Install in terminal* offers `pip install`. Changing it restarts the server.",
            NOWHERE, _fronts("vscode"), vscode_scope="window", choices=(
                Choice("useBundled", "Run the GradGuard bundled with the extension (on the "
                       "interpreter above, so that the probe uses its torch)."),
                Choice("fromEnvironment", "Run the GradGuard installed in the interpreter "
                       "(`python -m gradguard serve`); offer to install it when missing."))),
    Setting("installSpec", "text", "gradguard", "What `pip install` is given when GradGuard "
            "is missing from the interpreter and you choose *Install in terminal*: a "
            "requirement (default `gradguard`), a wheel, or the path of a source checkout.",
            NOWHERE, _fronts("vscode")),
    Setting("probe.onSave", "bool", False, "Run the autograd probe on a Python file each "
            "time it is saved. The probe executes the file's code under torch, so it only "
            "runs in a trusted workspace.",
            EVERYWHERE, _fronts("server", "vscode"), aliases=("probe.on_save", "probe.on-save")),
    Setting("probe.timeout", "seconds", 60.0, "Seconds a probe run may take before the "
            "server stops it.",
            EVERYWHERE, _fronts("probe", "server", "vscode"), minimum=1, maximum=3600,
            unit="seconds"),
    Setting("trace.server", "choice", "off", "Log the messages between VS Code and the "
            "GradGuard server in the **GradGuard** output channel.",
            NOWHERE, _fronts("vscode"), vscode_scope="window", choices=(
                Choice("off", "No trace."),
                Choice("messages", "Trace the names of the messages exchanged with the "
                       "server."),
                Choice("verbose", "Trace every message with its content."))),
    Setting("diagnosticMode", "choice", "openFilesOnly", "Which files GradGuard reports on. "
            "`openFilesOnly` (default): the open files. `workspace`: every Python file of "
            "the workspace folders (those `gradguard check .` would check), computed in the "
            "background from `gradguard check`'s cache (`.gradguard_cache/`), so the "
            "Problems panel lists hazards in files never opened, a hazard in an imported "
            "file that only an importer reveals included. Changing it restarts the server.",
            CLIENT, _fronts("server", "vscode"), vscode_scope="window", choices=(
                Choice("openFilesOnly", "Diagnostics of the files open in the editor."),
                Choice("workspace", "Diagnostics of every Python file of the workspace "
                       "folders, opened or not (the files `gradguard check .` would "
                       "check), in the Problems panel."))),
    # The editor's own timing, for any LSP client (the VS Code extension leaves them be).
    Setting("debounceMs", "whole", 75, "How long the server waits after a keystroke before "
            "analysing.",
            EVERYWHERE, _fronts("server"), aliases=("debounce_ms", "debounce-ms"),
            minimum=0, maximum=10_000, unit="milliseconds"),
    Setting("incremental", "bool", True, "Re-analyse only the blocks an edit changed "
            "(`false`: the whole file on every edit, for comparisons).",
            EVERYWHERE, _fronts("server")),
    # The probe's table in pyproject.toml: what `gradguard probe` runs and how.
    Setting("probe.entries", "entries", (), "What `gradguard probe` runs with no TARGET, "
            "relative to the pyproject.toml's folder; the server offers them as code "
            "lenses.",
            PYPROJECT, _fronts("probe", "server")),
    Setting("probe.memory_mb", "whole", 8192, "Memory a probe run may use (0: no limit).",
            PYPROJECT, _fronts("probe", "server"), minimum=0, unit="megabytes"),
    Setting("probe.device", "choice", "cpu", "Where the probe runs the code.",
            PYPROJECT, _fronts("probe"), choices=(Choice("cpu"), Choice("cuda"))),
)

BY_KEY: dict[str, Setting] = {setting.key: setting for setting in SETTINGS}
BY_SPELLING: dict[str, Setting] = {spelling: setting for setting in SETTINGS
                                   for spelling in setting.spellings}
# Keys that hold a table of settings.
TABLES = frozenset(key.split(".")[0] for key in BY_KEY if "." in key)
# Keys of a client's settings object that are not settings: the VS Code extension's
# workspace trust (the server reads it from initializationOptions), and the TCP token
# (the transport takes it out before the server sees it). Accepted without a word.
NOT_SETTINGS = frozenset({"trusted", "token"})


def default(key: str) -> Any:
    return BY_KEY[key].default
