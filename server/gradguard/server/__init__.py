"""The language server: a thin LSP layer over ``gradguard.analysis`` (pygls 2.x).

- ``main`` starts it; ``language_server`` holds the state between messages (the units,
  how results reach the client); ``handlers`` answers the messages; ``lsp_protocol``
  adds what pygls's protocol class does not do (a command's params, cancellation).
- ``documents`` and ``notebooks``: the open texts; ``positions``: client positions;
  ``uris``: document URIs to paths.
- ``scheduler``: when analyses run; ``collector``: when the cyclic collector does.
- ``diagnostics`` and ``actions``: what the client is sent (fixes through
  ``gradguard.fixes``); ``settings``: the configuration.
- ``probe_jobs``, ``probe_targets``, ``probe_marks``: running the torch probe, what it
  runs, and its findings kept on the lines they were found on.
"""
