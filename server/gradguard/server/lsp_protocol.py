"""What pygls does not hand a command handler: its request's params and its cancellation.

pygls calls a ``workspace/executeCommand`` handler with the command's arguments only, so
the ``workDoneToken`` the client sent (for the progress of that very request) is lost;
and ``$/cancelRequest`` only stops a request that has not started. The probe runs for
seconds to minutes, so it needs both: this protocol keeps each command request's params
by request id (the handler reads them through ``protocol.msg_id``, which pygls sets for
the handler's task) and tells listeners when the client cancels a request.

It also leaves pygls's own copy of the open text documents out: the server keeps each
document itself (``documents``), and keeping a second copy meant splitting a large
file into lines once more on every keystroke.

pygls 2 offers no public hook for either, so this overrides private members of pygls
(``_handle_request``, ``_request_futures``, ``_handle_cancel_notification``,
``fm.features``): pyproject.toml pins pygls to one minor version, and
tests/server/test_pygls_private.py fails when a pygls release changes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

MsgId = int | str


class GradGuardProtocol(LanguageServerProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.command_params: dict[MsgId, types.ExecuteCommandParams] = {}
        self.cancel_listeners: dict[MsgId, Callable[[], None]] = {}

    def current_command(self) -> tuple[MsgId | None, types.ExecuteCommandParams | None]:
        """In a command handler: its request id and the full params of its request."""
        msg_id = self.msg_id
        if msg_id is None:
            return None, None
        return msg_id, self.command_params.pop(msg_id, None)

    def _handle_request(self, msg_id: MsgId, method_name: str, params: Any) -> None:
        if method_name == types.WORKSPACE_EXECUTE_COMMAND and \
                isinstance(params, types.ExecuteCommandParams):
            self.command_params[msg_id] = params
        try:
            super()._handle_request(msg_id, method_name, params)
        finally:
            # A command that did not start (an unknown one) leaves nothing behind; one
            # that started takes its params when its handler runs.
            future = self._request_futures.get(msg_id)
            if future is None or future.done():
                self.command_params.pop(msg_id, None)

    def _handle_cancel_notification(self, msg_id: MsgId) -> None:
        super()._handle_cancel_notification(msg_id)
        listener = self.cancel_listeners.pop(msg_id, None)
        if listener is not None:
            listener()

    def _user_handler(self, method: str, params: Any) -> Iterator[Any]:
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams
                                    ) -> Iterator[Any]:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams
                                      ) -> Iterator[Any]:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams
                                     ) -> Iterator[Any]:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)
