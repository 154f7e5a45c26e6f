"""Runs the GradGuard bundled in the VS Code extension on the user's interpreter.

``<python> gradguard_bundled.py serve`` is ``<python> -m gradguard serve`` with the
extension's own copy of GradGuard (``../server``) and of its dependencies (``../libs``)
first on ``sys.path``, so that installing the extension is all a user does; the
interpreter stays the user's, since the probe runs their code under their torch. The
probe's child gets ``../server`` alone on PYTHONPATH (it needs nothing else), so the
user's code imports the user's packages. ``--version`` prints the bundled version once the native
parser has loaded: a Python version the bundle has no build for fails here, before the
server is started.
"""

import os
import sys

BUNDLED = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(BUNDLED, "server"), os.path.join(BUNDLED, "libs")]

if __name__ == "__main__":
    if sys.argv[1:] == ["--version"]:
        import libcst

        import gradguard

        libcst.parse_module("x = 1\n")  # loads libcst's native parser for this Python
        sys.stdout.write(f"{gradguard.__version__} (bundled)")
        sys.exit(0)
    from gradguard.cli.main import main

    sys.exit(main())
