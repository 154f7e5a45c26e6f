"""The private members of pygls that ``gradguard.server.lsp_protocol`` overrides or reads.

pygls has no public way to hand a command handler its request's params or to tell a
running request that the client cancelled it, so the protocol overrides these members,
and pyproject.toml pins pygls to the minor version they were checked against. When a
new pygls renames one or changes its signature, this fails before the server misbehaves.
"""

from __future__ import annotations

import inspect
import re
from importlib.metadata import version
from pathlib import Path

from lsprotocol import types
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol

from gradguard.config import tomllib
from gradguard.server.lsp_protocol import GradGuardProtocol
from gradguard.server.main import create_server

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


def test_pygls_is_pinned_to_one_minor_version_and_that_one_is_installed() -> None:
    dependencies = tomllib.loads(PYPROJECT.read_text("utf-8"))["project"]["dependencies"]
    (pin,) = [d for d in dependencies if d.startswith("pygls")]
    found = re.fullmatch(r"pygls>=(\d+)\.(\d+),<(\d+)\.(\d+)", pin)
    assert found, pin
    major, minor, below_major, below_minor = map(int, found.groups())
    assert (below_major, below_minor) == (major, minor + 1), pin
    assert version("pygls").startswith(f"{major}.{minor}."), version("pygls")


def test_the_overridden_request_and_cancel_handlers_keep_their_signatures() -> None:
    assert parameters(JsonRPCProtocol._handle_request) == \
        ["self", "msg_id", "method_name", "params"]
    assert parameters(JsonRPCProtocol._handle_cancel_notification) == ["self", "msg_id"]
    assert parameters(GradGuardProtocol._handle_request) == \
        parameters(JsonRPCProtocol._handle_request)
    assert parameters(GradGuardProtocol._handle_cancel_notification) == \
        parameters(JsonRPCProtocol._handle_cancel_notification)


def test_requests_in_flight_and_user_features_are_where_the_protocol_reads_them() -> None:
    protocol = create_server().requests
    assert isinstance(protocol._request_futures, dict)
    assert isinstance(protocol.fm.features, dict)
    assert types.TEXT_DOCUMENT_DID_OPEN in protocol.fm.features  # the server's own handler
    assert protocol.msg_id is None  # outside a request


def test_the_document_sync_methods_it_replaces_are_pygls_builtin_generators() -> None:
    for name in ("lsp_text_document__did_open", "lsp_text_document__did_change",
                 "lsp_text_document__did_close"):
        builtin = getattr(LanguageServerProtocol, name)
        assert inspect.isgeneratorfunction(builtin), name
        assert parameters(builtin) == ["self", "params"], name
        assert getattr(GradGuardProtocol, name) is not builtin, name
