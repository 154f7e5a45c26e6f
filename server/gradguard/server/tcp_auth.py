"""The secret a TCP client must present: where it comes from, and whether a client has it.

Over stdio the client is the editor that started the server. Over TCP anyone who can
reach the port is a client, so ``gradguard serve --tcp`` requires a token: from
``GRADGUARD_TOKEN``, or read from ``--token-file`` (refused unless only its owner, the
user running the server, may read it), or generated and written to such a file. A
client presents it as ``initializationOptions.token`` in its ``initialize`` request.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ENVIRONMENT_VARIABLE = "GRADGUARD_TOKEN"
# JSON-RPC and LSP error codes a refused connection is answered with.
PARSE_ERROR = -32700
SERVER_NOT_INITIALIZED = -32002
REQUEST_FAILED = -32803
# A token short enough to guess is no secret; generated ones are 43 characters.
MIN_LENGTH = 16
# A token file is read up to this many characters: a token, not whatever the path holds.
MAX_FILE_CHARS = 4096


class TokenError(ValueError):
    """The token cannot be had as configured; the message says why and what to do."""


@dataclass(frozen=True)
class Token:
    secret: str
    path: str | None = None  # the file it was read from or written to
    generated: bool = False
    # A directory the server made for a token file of its own: removed at exit.
    scratch: str | None = None

    def remove_scratch(self) -> None:
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


def server_token(environment: Mapping[str, str], token_file: str | None) -> Token:
    """The token the server requires, from the environment or ``token_file``, else new."""
    from_environment = environment.get(ENVIRONMENT_VARIABLE) or None  # set empty: unset
    if from_environment is not None and token_file is not None:
        raise TokenError(f"both {ENVIRONMENT_VARIABLE} and --token-file are given; "
                         "give one of them")
    if from_environment is not None:
        return Token(_checked(from_environment, ENVIRONMENT_VARIABLE))
    if token_file is not None:
        if os.path.lexists(token_file):
            return Token(read_token_file(token_file), path=token_file)
        return Token(write_token_file(token_file), path=token_file, generated=True)
    scratch = tempfile.mkdtemp(prefix="gradguard-")  # made readable by its owner only
    path = os.path.join(scratch, "token")
    return Token(write_token_file(path), path=path, generated=True, scratch=scratch)


def read_token_file(path: str) -> str:
    """The token in ``path``, which must belong to this user and be private to them."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise TokenError(f"cannot read the token file {path}: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise TokenError(f"the token file {path} is not a regular file")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise TokenError(f"the token file {path} belongs to another user; a token "
                         "someone else can write is no secret of yours")
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise TokenError(f"the token file {path} may be read or changed by others "
                         f"(mode {stat.S_IMODE(info.st_mode):03o}); make it private with "
                         f"`chmod 600 {path}`")
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read(MAX_FILE_CHARS)
    except (OSError, UnicodeDecodeError) as error:
        raise TokenError(f"cannot read the token file {path}: {error}") from None
    return _checked(text.strip(), f"the token in {path}")


def write_token_file(path: str) -> str:
    """A new token, written to ``path``, which must not exist yet, readable by us only."""
    secret = secrets.token_urlsafe(32)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:
        raise TokenError(f"cannot create the token file {path}: {error.strerror}") from None
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(secret + "\n")
    return secret


def _checked(secret: str, origin: str) -> str:
    if len(secret) < MIN_LENGTH:
        raise TokenError(f"{origin} is too short to be a secret: it needs at least "
                         f"{MIN_LENGTH} characters (leave it out and the server makes one)")
    return secret


@dataclass(frozen=True)
class Refusal:
    code: int
    message: str


def refusal(message: Any, token: Token) -> Refusal | None:
    """Why a connection whose first message is ``message`` is refused; None: it passes."""
    if not isinstance(message, dict) or message.get("method") != "initialize" or \
            request_id(message) is None:
        return Refusal(SERVER_NOT_INITIALIZED, "the first message must be an initialize "
                       "request presenting the token as initializationOptions.token")
    given = presented(message)
    if given is None:
        return Refusal(REQUEST_FAILED, "this server listens on TCP and serves only a client "
                       "that presents its token: pass it as initializationOptions.token "
                       "(gradguard serve printed where the token is)")
    if not matches(given, token):
        return Refusal(REQUEST_FAILED, "wrong token in initializationOptions.token")
    return None


def request_id(message: Any) -> int | str | None:
    """The id of a request, to answer it by; None for anything else."""
    msg_id = message.get("id") if isinstance(message, dict) else None
    return msg_id if isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool) else None


def presented(message: Any) -> object:
    """The token an ``initialize`` request presents (``initializationOptions.token``)."""
    params = message.get("params") if isinstance(message, dict) else None
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    return options.get("token") if isinstance(options, dict) else None


def matches(given: object, token: Token) -> bool:
    """Whether ``given`` is the token, in time that does not depend on where they differ
    (nor on their lengths: both are hashed first)."""
    if not isinstance(given, str):
        return False
    return hmac.compare_digest(_digest(given), _digest(token.secret))


def _digest(text: str) -> bytes:
    # surrogatepass: JSON and the environment can both carry lone surrogates.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def without_token(message: dict[str, Any]) -> dict[str, Any]:
    """The message with the token taken out: the server keeps no copy of the secret
    (pygls logs the initialize params at INFO)."""
    params = message.get("params")
    if not isinstance(params, dict):
        return message
    options = params.get("initializationOptions")
    if not isinstance(options, dict) or "token" not in options:
        return message
    options = {key: value for key, value in options.items() if key != "token"}
    return {**message, "params": {**params, "initializationOptions": options}}
