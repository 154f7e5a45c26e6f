"""``gradguard check`` on ``.ipynb`` files: code cells in order, read as one program."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.test_cli import check

MODEL_CELL = ["%matplotlib inline\n", "import torch\n",
              "a = torch.randn(3, requires_grad=True)\n", "b = a.exp()"]
TRAIN_CELL = ["!nvidia-smi\n", "b += 1\n", "b.sum().backward()"]
OUTPUT = {"output_type": "stream", "name": "stdout", "text": ["tensor([1., 2.])\n"]}


def notebook(*cells: dict[str, Any]) -> dict[str, Any]:
    return {"cells": list(cells), "metadata": {"language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def code(source: list[str], outputs: list[Any] | None = None) -> dict[str, Any]:
    return {"cell_type": "code", "execution_count": 1, "metadata": {"tags": ["keep"]},
            "outputs": outputs or [], "source": source}


def markdown(text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": [text]}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """t.ipynb: the model cell saves exp's output, the training cell overwrites it."""
    book = notebook(markdown("# Training\n"), code(MODEL_CELL, [OUTPUT]), code(TRAIN_CELL))
    (tmp_path / "t.ipynb").write_text(json.dumps(book, indent=1) + "\n", encoding="utf-8")
    (tmp_path / "t.py").write_text("".join(MODEL_CELL[1:]) + "\n" + "".join(TRAIN_CELL[1:])
                                   + "\n", encoding="utf-8")
    return tmp_path


def test_a_directory_walk_reads_notebooks_beside_python_files(project: Path) -> None:
    done = check(".", cwd=project)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "./t.ipynb:cell 3:2:1: GG001 `b +=` overwrites the output of `a.exp()` at cell 2, "
        "line 4, which exp's backward needs",
        "./t.py:4:1: GG001 `b +=` overwrites the output of `a.exp()` at line 3, which "
        "exp's backward needs",
    ]


def test_json_gives_the_cell_and_the_line_in_it(project: Path) -> None:
    [finding] = json.loads(check("--format", "json", "t.ipynb", cwd=project).stdout)
    assert (finding["cell"], finding["line"], finding["column"]) == (3, 2, 1)
    assert [(r["cell"], r["line"]) for r in finding["related"]] == [(2, 4)]


def test_ipython_magics_and_shell_lines_are_skipped_not_parsed(tmp_path: Path) -> None:
    book = notebook(code(["%%bash\n", "echo $((1 + 2))\n"]),
                    code(["%time x = 1\n", "!pip install torch\n", "y = x + 1\n"]))
    (tmp_path / "m.ipynb").write_text(json.dumps(book), encoding="utf-8")
    done = check("m.ipynb", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_fix_rewrites_the_cell_and_keeps_outputs_metadata_and_magics(project: Path) -> None:
    before = json.loads((project / "t.ipynb").read_text(encoding="utf-8"))
    done = check("--fix", "t.ipynb", cwd=project)
    assert done.returncode == 0, done.stderr
    after = json.loads((project / "t.ipynb").read_text(encoding="utf-8"))
    assert after["cells"][2]["source"] == ["!nvidia-smi\n", "b = b + 1\n", "b.sum().backward()"]
    after["cells"][2]["source"] = before["cells"][2]["source"]
    assert after == before  # outputs, metadata, other cells: untouched
    assert (project / "t.ipynb").read_text(encoding="utf-8").startswith('{\n "cells"')
    assert check("t.ipynb", cwd=project).returncode == 0


def test_a_fix_that_adds_a_line_keeps_it_in_its_cell(tmp_path: Path) -> None:
    book = notebook(
        code(["import torch\n", "x = torch.randn(3, requires_grad=True)\n",
              "y = torch.sigmoid(x)\n"]),
        code(["y[0] = 0\n", "y.sum().backward()\n"]),
        code(["print(y)\n"]))
    (tmp_path / "w.ipynb").write_text(json.dumps(book), encoding="utf-8")
    assert check("--fix", "w.ipynb", cwd=tmp_path).returncode == 0
    cells = json.loads((tmp_path / "w.ipynb").read_text(encoding="utf-8"))["cells"]
    assert [len(cell["source"]) for cell in cells] == [3, 3, 1]
    assert "".join(cells[1]["source"]).startswith("y = y.clone()\ny[0] = 0\n")


def test_not_a_notebook_is_reported_and_the_run_goes_on(project: Path) -> None:
    (project / "bad.ipynb").write_text("{not json", encoding="utf-8")
    done = check(".", cwd=project)
    assert "bad.ipynb:1:1: GG900 not analysed: not a notebook: invalid JSON at line 1" \
        in done.stdout
    assert done.returncode == 3 and "t.ipynb:cell 3:2:1: GG001" in done.stdout


def test_a_syntax_error_is_located_in_its_cell(tmp_path: Path) -> None:
    book = notebook(code(["import torch\n"]), markdown("notes"),
                    code(["x = 1\n", "def f(x:\n", "    x.add_(1)\n"]))
    (tmp_path / "s.ipynb").write_text(json.dumps(book), encoding="utf-8")
    done = check("s.ipynb", cwd=tmp_path)
    assert done.stdout.startswith("s.ipynb:cell 3:2:6: GG900 not analysed: syntax error"), \
        done.stdout
