"""What the tests and the benches share to drive a real ``gradguard serve``: the LSP
client side of a session (``lsp``) and a raw JSON-RPC client for malformed messages
(``stdio``). It lives outside tests/ so a bench needs no test module; run from the
repository root, where pytest (``pythonpath``) and ``python -m bench.x`` find it."""
