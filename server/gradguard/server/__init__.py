"""The language server: a thin LSP layer over ``gradguard.analysis`` (pygls 2.x).

``main`` starts it; ``protocol`` holds the state between messages and ``handlers`` the
messages; ``documents``/``notebooks`` the open texts; ``scheduler`` when analyses run;
``diagnostics`` and ``actions`` what the client is sent; ``positions`` the column units;
``settings`` the configuration.
"""
