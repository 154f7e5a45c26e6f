"""The torch probe: runs user code under torch and reports what really happened.

The parent-side API, importable without torch (the child process is the only place
torch is imported): ``run_probe``/``run_probes``/``run_probe_async`` in
``gradguard.probe.runner``, targets in ``gradguard.probe.target``, the
``[tool.gradguard.probe]`` settings in ``gradguard.probe.config``. See docs/probe.md.
"""
