"""The editor's fix-all and ``gradguard check --fix`` write the same bytes.

Both go through one fix engine (``gradguard.fixes.apply``). This holds them to it on
every Python file of the accuracy corpus and of ``examples/``: ``check --fix`` rewrites
each file of a copy of the tree, one file a run; a real ``gradguard serve`` over stdio
is asked, file by file, for ``source.fixAll``, and its edit applied as an editor
applies it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.conftest import PUSH, REPO, RecordingClient, start

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]

TREES = ["tests/corpus", "examples"]
# Each file's text after `check --fix` on it alone; then the tree is put back, since a
# run on train.py also fixes what check reports in the files it imports.
ONE_FILE_AT_A_TIME = """import sys
from pathlib import Path
from gradguard.cli.main import main
paths = [Path(p) for p in sys.argv[1:]]
originals = {p: p.read_bytes() for p in paths}
fixed = {}
for path in paths:
    main(["check", "--fix", "--no-cache", str(path)])
    fixed[path] = path.read_bytes()
    for other in paths:
        if other.read_bytes() != originals[other]:
            other.write_bytes(originals[other])
for path in paths:
    path.write_bytes(fixed[path])
"""


def _python_files(root: Path) -> list[Path]:
    return sorted(p for tree in TREES for p in (root / tree).rglob("*.py"))


async def test_fix_all_in_the_editor_gives_the_text_check_fix_writes_on_every_file(
        client: RecordingClient, tmp_path: Path) -> None:
    for tree in TREES:
        shutil.copytree(REPO / tree, tmp_path / "by_check" / tree)
    files = [p.relative_to(REPO) for p in _python_files(REPO)]
    assert len(files) > 150
    # `check --fix` on each file alone, in one process: the editor's fix-all has one
    # document, and the CLI on a directory also fixes what one file's code reaches in
    # another (yolov5_split's utils/loss.py, from train.py), which one document cannot.
    subprocess.run([sys.executable, "-c", ONE_FILE_AT_A_TIME, *map(str, files)],
                   cwd=tmp_path / "by_check", capture_output=True, check=False, timeout=900)

    session = await start(client, PUSH, REPO)
    changed = 0
    for relative in files:
        original = (REPO / relative).read_text("utf-8")
        uri = session.open(REPO / relative, original)
        await session.diagnostics(uri)  # the analysis of this version is done
        actions = await session.code_actions(uri, [], only=["source.fixAll"])
        by_editor = original
        for action in actions:
            assert action.edit is not None
            version = await session.apply(uri, action.edit)
            by_editor = session.texts[uri]
            assert version == session.versions[uri]
        session.close(uri)
        by_check = (tmp_path / "by_check" / relative).read_bytes().decode("utf-8")
        assert by_editor == by_check, relative
        changed += by_check != original
    assert changed >= 20  # the seeds and most fixable positives of the corpus do change
