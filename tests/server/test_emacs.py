"""A real editor as the client: Emacs with eglot (Debian's ``emacs-nox`` and
``elpa-eglot``, installed by scripts/test.sh), configured as docs/editors.md says.

Emacs 28's eglot 1.9 pushes nothing, pulls nothing: it takes pushed diagnostics into
flymake, asks for code actions with the diagnostics in their context, and applies a
workspace edit with its own code.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import EXAMPLES
from tests.server.test_neovim import _fixed_seed

pytestmark = [pytest.mark.editor, pytest.mark.slow]

SCRIPT = Path(__file__).parent / "emacs" / "unet3plus.el"
EMACS = shutil.which("emacs")
EGLOT = Path("/usr/share/emacs/site-lisp/elpa").glob("eglot-*")


@pytest.mark.skipif(EMACS is None or not any(EGLOT),
                    reason="Emacs with eglot not installed (scripts/test.sh installs it)")
def test_emacs_eglot_shows_the_unet3plus_finding_and_applies_the_quick_fix(
        tmp_path: Path) -> None:
    assert EMACS is not None
    file = tmp_path / "unet3plus_seed.py"
    shutil.copy(EXAMPLES / "unet3plus_seed.py", file)
    out = tmp_path / "report.json"
    env = {**os.environ, "GG_PYTHON": sys.executable, "GG_FILE": str(file),
           "GG_OUT": str(out), "HOME": str(tmp_path)}
    subprocess.run([EMACS, "--batch", "-Q", "-l", str(SCRIPT)], env=env, timeout=120,
                   check=True, capture_output=True)
    report: dict[str, Any] = json.loads(out.read_text("utf-8"))
    assert "error" not in report, report

    [finding] = report["before"]
    assert (finding["line"], finding["col"]) == (117, len("            "))
    assert finding["text"].startswith("gradguard [GG001]: `nn.Dropout(p=0.5, inplace=True)`")
    assert "Ignore GG001 on this line" in report["actions"]
    assert report["applied"] == "Write into a copy: `e5 = e5.clone()` first"
    assert report["text"] == _fixed_seed()
    assert report["after"] == []
