"""From what the tracker saw to findings in the JSON schema of ``gradguard check``.

Each finding is a dict with the keys of ``gradguard.cli.formats.hazard_record`` (path,
line, column, end_line, end_column, code, severity, message, related, fix) plus
``"source": "probe"`` and ``"torch_error"``: the error torch raised because of it (the
backward that failed, or the forward op autograd refused), or None. Paths are absolute.
Runs in the probe's child process, under torch.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import torch

from gradguard.probe.sites import Point, Site, UserFiles, site, source_text
from gradguard.probe.tracker import Clobber, Place, Saved, SilentWrite, StaleUnpack, Tracker
from gradguard.rules import (
    FORBIDDEN_VIEW_WRITTEN,
    LEAF_WRITTEN_IN_PLACE,
    PARAMETERS_UPDATED_BEFORE_BACKWARD,
    SAVED_TENSOR_CHANGED_SILENTLY,
    SAVED_TENSOR_OVERWRITTEN,
)
from gradguard.rules import message as rule_message

Finding = dict[str, Any]

# autograd's own words for the errors it raises before an in-place op runs (the
# dispatch mode never sees those ops), mapped to rule codes. Order matters: the view
# of a leaf message contains the leaf message.
_FORWARD_ERRORS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"view of a leaf Variable that requires grad is being used in an in-place"),
     FORBIDDEN_VIEW_WRITTEN, "probe.leaf"),
    (re.compile(r"is a view and is being modified inplace"),
     FORBIDDEN_VIEW_WRITTEN, "probe.multi"),
    (re.compile(r"view was created in no_grad mode and is being modified inplace"),
     FORBIDDEN_VIEW_WRITTEN, "probe.nograd"),
    (re.compile(r"a leaf Variable that requires grad is being used in an in-place"),
     LEAF_WRITTEN_IN_PLACE, "probe"),
)
INPLACE_BACKWARD_ERROR = "modified by an inplace operation"


class Reporter:
    """Turns tracker events into findings, one per (code, write line).

    A clobber is reported at once (a crash or timeout later must not lose it), and
    confirmed when backward, or anything else, unpacks the overwritten tensor and gets
    autograd's error. It is retracted (a ``retract`` event) when it turns out harmless:
    every tensor it overwrote was released without being used (its graph discarded
    without backward), or the target ran to its end without ever needing them.
    """

    def __init__(self, tracker: Tracker, user_files: UserFiles,
                 emit: Callable[[str, dict[str, Any]], None], ids: Iterator[int]) -> None:
        self.tracker = tracker
        self.user_files = user_files
        self.emit = emit
        self.findings: dict[int, Finding] = {}
        self._ids = ids  # shared by the targets of one child: ids stay unique
        self._index: dict[tuple[Any, ...], int] = {}
        self._key_of: dict[int, tuple[Any, ...]] = {}
        self._live: dict[int, int] = {}  # finding -> overwritten tensors still saved
        self._saves: dict[int, int] = {}  # finding -> distinct saving sites it names
        self._confirmed: set[int] = set()  # used by backward, though torch raised nothing

    # -- tracker callbacks (run inside torch ops: never raise) -------------------------

    def clobber(self, event: Clobber) -> None:
        try:
            self._clobber(event)
        except Exception as error:  # pragma: no cover - a bug here must not break the run
            self.emit("internal", {"error": f"{type(error).__name__}: {error}"})

    def stale(self, event: StaleUnpack) -> None:
        try:
            self._stale(event)
        except Exception as error:  # pragma: no cover
            self.emit("internal", {"error": f"{type(error).__name__}: {error}"})

    def _clobber(self, event: Clobber) -> None:
        saved, write = event.saved, event.write
        write_site, write_call, write_module = self._locate(write.place)
        save_site, save_call, save_module = self._locate(saved.place)
        if write_site is None:  # no user frame at all (torch-internal write)
            write_site = save_site
        if write_site is None:
            return
        versions = f"version {saved.version} -> {event.after}"
        saved_what = _saved_description(saved, _module_phrase(saved.place, save_module))
        where = _line_ref(save_site, write_site)
        parameter = _parameter(write.tensor)
        if parameter is None:
            parameter = _shared_parameter(write.tensor, self.tracker)
        if parameter is not None:
            code = PARAMETERS_UPDATED_BEFORE_BACKWARD
            name = _parameter_name(parameter, self.tracker)
            what = f"parameter `{name}`" if name else "a leaf tensor that requires grad"
            actor = (f"`optimizer.step()` (`{write.op}`)" if write.in_optimizer
                     else f"`{write.op}`")
            message = rule_message(code, "probe", actor=actor, what=what, saved=saved_what,
                                   where=where, versions=versions)
        else:
            code = SAVED_TENSOR_OVERWRITTEN
            view = (" (through a view of the same storage)"
                    if _is_view_of_other(write.tensor, saved.tensor) else "")
            message = rule_message(code, "probe", op=write.op,
                                   module=_module_phrase(write.place, write_module),
                                   saved=saved_what, view=view, where=where,
                                   versions=versions)
        related = []
        if save_site is not None:
            related.append(_related(save_site, f"{saved_what} saved here for backward "
                                               f"(version {saved.version})"))
        if write_call is not None and write_call == save_call:
            related.append(_related(write_call, "both ran in this call"))
        else:
            if write_call is not None:
                related.append(_related(write_call, f"`{write.op}` ran in this call"))
            if save_call is not None:
                related.append(_related(save_call, f"`{saved.op}` ran in this call"))
        key = (code, write_site.path, write_site.line)
        saved.finding = self._add(key, code, write_site, message, related)
        self._live[saved.finding] = self._live.get(saved.finding, 0) + 1

    def release(self, finding: int) -> None:
        """A tensor a finding overwrote is no longer saved (weakref callback: no raise)."""
        try:
            left = self._live.get(finding)
            if left is None:
                return  # not ours: a previous target's, or already settled
            self._live[finding] = left - 1
            if left - 1 <= 0:
                self._retract_unconfirmed(finding)
        except Exception:  # pragma: no cover
            pass

    def settle(self, completed: bool) -> None:
        """The target ended. If it ran to completion, what it overwrote but never needed
        did no harm; if it stopped early, backward may simply not have been reached."""
        if completed:
            for finding in list(self._live):
                self._retract_unconfirmed(finding)
        self._live.clear()

    def _retract_unconfirmed(self, finding: int) -> None:
        record = self.findings.get(finding)
        self._live.pop(finding, None)
        if record is None or record["torch_error"] is not None or finding in self._confirmed:
            return
        del self.findings[finding]
        self._index.pop(self._key_of.pop(finding), None)
        self.emit("retract", {"id": finding})

    def silent(self, event: SilentWrite) -> None:
        try:
            self._silent(event)
        except Exception as error:  # pragma: no cover
            self.emit("internal", {"error": f"{type(error).__name__}: {error}"})

    def _silent(self, event: SilentWrite) -> None:
        saved, write = event.saved, event.write
        write_site, _, write_module = self._locate(write.place)
        save_site, _, save_module = self._locate(saved.place)
        if write_site is None or save_site is None:
            return
        saved_what = _saved_description(saved, _module_phrase(saved.place, save_module))
        code = SAVED_TENSOR_CHANGED_SILENTLY
        message = rule_message(code, "probe", op=write.op,
                               module=_module_phrase(write.place, write_module),
                               saved=saved_what, where=_line_ref(save_site, write_site))
        if event.difference is not None:
            # Recomputed in the child with the old values: a fact, hence an error.
            severity = "error"
            message += rule_message(code, "probe.confirmed",
                                    difference=event.difference)
        else:
            severity = "warning"
            message += rule_message(code, "probe.unconfirmed")
        related = [_related(save_site, f"{saved_what} saved here for backward")]
        index = self._add((code, write_site.path, write_site.line, "silent"), code,
                          write_site, message, related, severity)
        self._confirmed.add(index)

    def _stale(self, event: StaleUnpack) -> None:
        saved = event.saved
        if saved.finding is None:
            save_site, _, save_module = self._locate(saved.place)
            if save_site is None:
                return
            what = _saved_description(saved, _module_phrase(saved.place, save_module))
            code = SAVED_TENSOR_OVERWRITTEN
            message = rule_message(code, "probe.stale", saved=what)
            saved.finding = self._add((code, save_site.path, save_site.line, "stale"),
                                      code, save_site, message, [])
        finding = self.findings.get(saved.finding)
        if finding is not None and finding["torch_error"] is None:
            finding["torch_error"] = event.message
            self._update(saved.finding)

    # -- exceptions --------------------------------------------------------------------

    def exception(self, error: BaseException) -> bool:
        """Report an exception that left the user's code. True if a finding explains it:
        a forward in-place error (GG002/GG003), or backward failing on a clobber."""
        text = str(error)
        if not isinstance(error, RuntimeError):
            return False
        if INPLACE_BACKWARD_ERROR in text:
            return any(f["torch_error"] is not None for f in self.findings.values())
        for pattern, code, kind in _FORWARD_ERRORS:
            if pattern.search(text):
                where = self.user_files.innermost_in_traceback(error.__traceback__)
                if where is None:
                    return False
                at = site(where)
                message = rule_message(code, kind, op=source_text(at))
                index = self._add((code, at.path, at.line, None), code, at, message, [])
                finding = self.findings[index]
                if finding["torch_error"] is None:
                    finding["torch_error"] = text.strip().splitlines()[0]
                    self._update(index)
                return True
        return False

    # -- helpers -----------------------------------------------------------------------

    def _add(self, key: tuple[Any, ...], code: str, at: Site, message: str,
             related: list[dict[str, Any]], severity: str = "error") -> int:
        known = self._index.get(key)
        if known is not None:
            self._merge(known, related)
            return known
        index = next(self._ids)
        finding: Finding = {
            "path": at.path, "line": at.line, "column": at.column,
            "end_line": at.end_line, "end_column": at.end_column,
            "code": code, "severity": severity, "message": message, "related": related,
            "fix": None, "source": "probe", "torch_error": None,
        }
        self.findings[index] = finding
        self._index[key] = index
        self._key_of[index] = key
        self.emit("finding", {"id": index, "finding": finding})
        return index

    def _merge(self, index: int, related: list[dict[str, Any]]) -> None:
        """One write that overwrote several saved tensors (an optimizer step over many
        layers) is one finding; the other saves join its related locations."""
        finding = self.findings.get(index)
        if finding is None:
            return
        added = [r for r in related[:1] if r not in finding["related"]]
        if not added:
            return
        saves = self._saves[index] = self._saves.get(index, 1) + len(added)
        first = finding["message"].split(" [+", 1)[0]
        finding["message"] = f"{first} [+{saves - 1} more saved tensors, see related]"
        finding["related"] = finding["related"] + added
        self._update(index)

    def _update(self, index: int) -> None:
        self.emit("update", {"id": index, "finding": self.findings[index]})

    def _locate(self, place: Place) -> tuple[Site | None, Site | None, torch.nn.Module | None]:
        """(where to report, the user's call line if that differs, the module that ran).

        An op run by a module that a torch container (``nn.Sequential``) called is
        reported where that module was built: the ``nn.Dropout(inplace=True)`` line is
        the one to change, not the ``self.head(x)`` that ran the whole Sequential."""
        if place.where is None:
            return None, None, None
        call = site(place.where)
        module = place.stack[0] if place.depth >= 1 and place.stack else None
        if place.depth >= 2 and module is not None:
            built: Point | None = self.tracker.built_at.get(module)
            if built is not None:
                return site(built), call, module
        return call, None, module


def _related(at: Site, message: str) -> dict[str, Any]:
    return {"path": at.path, "line": at.line, "column": at.column, "message": message}


def _line_ref(target: Site | None, here: Site) -> str:
    if target is None:
        return ""
    if target.path == here.path:
        return f" at line {target.line}"
    return f" at {target.path}:{target.line}"


def _saved_description(saved: Saved, in_module: str) -> str:
    if saved.role == "output":
        return f"the output of `{saved.op}`{in_module}"
    if saved.argument:
        return f"the input `{saved.argument}` of `{saved.op}`{in_module}"
    return f"an input of `{saved.op}`{in_module}"


def _module_phrase(place: Place, module: torch.nn.Module | None) -> str:
    if module is None:
        return ""
    path = module_path(place)
    if "." not in path:  # the outermost module itself: its class is its name
        return f" in `{describe_module(module)}`"
    return f" in `{path}` ({describe_module(module)})"


def module_path(place: Place) -> str:
    """``UNet3Plus.cls.0``: the running module named from the outermost one on the stack."""
    chain = []
    stack = place.stack
    while stack is not None:
        chain.append(stack[0])
        stack = stack[1]
    chain.reverse()
    parts = [type(chain[0]).__name__]
    for parent, child in zip(chain, chain[1:], strict=False):
        name = next((n for n, m in parent.named_modules() if m is child and n), None)
        # A module called by one it does not belong to starts a name of its own.
        parts.append(name if name is not None else f"({type(child).__name__})")
    return ".".join(parts)


def describe_module(module: torch.nn.Module) -> str:
    """``Dropout(p=0.5, inplace=True)``: the class and its own arguments, no children."""
    try:
        extra = module.extra_repr()
    except Exception:
        extra = ""
    return f"{type(module).__name__}({extra})" if "\n" not in extra else type(module).__name__


def _is_view_of_other(written: torch.Tensor, saved: torch.Tensor) -> bool:
    try:
        return (written.shape, written.stride(), written.storage_offset()) != \
            (saved.shape, saved.stride(), saved.storage_offset())
    except RuntimeError:
        return False


def _parameter(written: torch.Tensor) -> torch.Tensor | None:
    """The leaf that requires grad (a parameter) a write goes to, directly or via a view.
    Outside no_grad autograd refuses such writes, so these are optimizer steps and
    weight edits under no_grad."""
    base = written._base if written._base is not None else written
    return base if base.is_leaf and base.requires_grad else None


def _shared_parameter(written: torch.Tensor, tracker: Tracker) -> torch.Tensor | None:
    """A parameter of a module the target ran whose storage a write goes to through an
    alias (``Embedding(max_norm=...)`` renormalises ``weight.detach()``): a weight edit."""
    try:
        pointer = written.untyped_storage().data_ptr()
    except RuntimeError:  # pragma: no cover (a tensor without storage)
        return None
    for root in list(tracker.roots):
        for candidate in root.parameters():
            if candidate.requires_grad and candidate.untyped_storage().data_ptr() == pointer:
                return candidate
    return None


def _parameter_name(parameter: torch.Tensor, tracker: Tracker) -> str | None:
    for root in list(tracker.roots):
        for name, candidate in root.named_parameters():
            if candidate is parameter:
                return name
    return None
