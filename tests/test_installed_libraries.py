"""Layers from installed libraries: imports followed into an installed package's source.

A package installed in the interpreter's search path (here a tiny one made under
``tmp_path``, with its ``dist-info``) is read, never imported: a call from the user's
code into it is summarised like a call into the project, and a hazard between the two is
reported on the user's line, with the library's line as related information. Only
packages that use torch are followed (torch itself never: that is the facts tables'
job), and a library's file is parsed only when a call reaches it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradguard.analysis.analyze import ProjectRun
from gradguard.analysis.hazard import Hazard
from gradguard.analysis.libraries import Libraries, search_folders

LAYERS = '''import torch
from torch import nn
from torch.nn import CrossEntropyLoss


def scale_(t):
    t.mul_(2)
    return t


class QAHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.qa = nn.Linear(4, 2)

    def forward(self, x, start_positions=None):
        logits = self.qa(x)
        start_logits = logits[:, 0]
        if start_positions is not None:
            start_positions.clamp_(0, 3)
            return CrossEntropyLoss()(start_logits.unsqueeze(0), start_positions)
        return start_logits


def wave(t):
    return torch.sin(t)


class Wave(nn.Module):
    def forward(self, t):
        return wave(t) * 2
'''
UNUSED = '''import torch


def never_called(t):
    return t.add_(1)
'''


def install(site: Path, name: str, files: dict[str, str], requires: str = "torch",
            version: str = "1.2") -> None:
    """A package ``name`` as pip lays it out: its files and a ``dist-info``."""
    for relative, text in files.items():
        path = site / name / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    requirement = f"Requires-Dist: {requires}\n" if requires else ""
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{requirement}", "utf-8")


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site-packages"
    # The package's __init__ re-exports with a star import, as transformers' lazy ones do.
    install(folder, "layerlib", {"__init__.py": "from .layers import *\n",
                                 "layers.py": LAYERS, "unused.py": UNUSED})
    return folder


def check(project: Path, site: Path, script: str) -> tuple[dict[str, list[Hazard]], ProjectRun]:
    path = project / "train.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    source = textwrap.dedent(script)
    path.write_text(source, "utf-8")
    run = ProjectRun([str(project)], libraries=Libraries((str(site),)))
    return run.file(str(path), source).found, run


def test_a_library_function_writing_into_what_the_user_saved_is_reported_on_the_call(
        tmp_path: Path, site: Path) -> None:
    found, _ = check(tmp_path / "project", site, """\
        import torch
        from layerlib import scale_

        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        scale_(y)
        y.sum().backward()
    """)

    assert list(found) == [str(tmp_path / "project" / "train.py")]  # never the library's
    (hazard,) = next(iter(found.values()))
    assert (hazard.code, hazard.span.line) == ("GG001", 6)
    # The library's function is named as in-place (``scale_``): writing is what it is
    # for, and handing it a copy would drop the write the caller asked for.
    assert hazard.fix is None
    related = {(Path(r.path).name if r.path else "train.py", r.span.line)
               for r in hazard.related}
    assert related == {("train.py", 5), ("layers.py", 7)}  # the save and the library write


def test_the_same_call_on_a_copy_is_clean(tmp_path: Path, site: Path) -> None:
    found, _ = check(tmp_path / "project", site, """\
        import torch
        from layerlib import scale_

        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        scale_(y.clone())
        y.sum().backward()
    """)

    assert found == {}


def test_a_save_inside_a_library_layer_names_the_users_call_that_made_it(
        tmp_path: Path, site: Path) -> None:
    found, _ = check(tmp_path / "project", site, """\
        import torch
        from layerlib import Wave

        x = torch.randn(3, requires_grad=True)
        y = x * 1.5
        out = Wave()(y)
        y.mul_(2)
        out.sum().backward()
    """)

    ((hazard,),) = found.values()
    assert (hazard.code, hazard.span.line) == ("GG001", 7)
    related = {(Path(r.path).name if r.path else "train.py", r.span.line)
               for r in hazard.related}
    assert related == {("layers.py", 26), ("train.py", 6)}  # sin in wave, and Wave()(y)


def test_a_save_in_the_users_own_file_adds_no_call(tmp_path: Path, site: Path) -> None:
    found, _ = check(tmp_path / "project", site, """\
        import torch
        from layerlib import Wave

        x = torch.randn(3, requires_grad=True)
        y = x * 1.5
        out = torch.sin(y)
        y.mul_(2)
        out.sum().backward()
    """)

    ((hazard,),) = found.values()
    assert [(r.path, r.span.line) for r in hazard.related] == [(None, 6)]


TWO_FORWARDS = """\
    import torch
    from layerlib import QAHead

    head = QAHead()
    labels = torch.tensor([1, 7])
    first = head(torch.randn(2, 4), start_positions=labels)
    second = head(torch.randn(2, 4), start_positions={labels})
    (first + second).backward()
"""


def test_a_library_layer_clamping_the_labels_an_earlier_call_saved(
        tmp_path: Path, site: Path) -> None:
    found, _ = check(tmp_path / "project", site, TWO_FORWARDS.format(labels="labels"))

    (hazards,) = found.values()
    assert {(h.code, h.span.line) for h in hazards} == {("GG001", 7)}
    (hazard,) = hazards
    assert "layers.py:21" in hazard.message  # the loss that saved the labels
    assert any(r.path and r.path.endswith("layers.py") and r.span.line == 20
               for r in hazard.related)  # the library's clamp_


def test_the_fix_hands_the_library_a_copy_of_what_it_writes(
        tmp_path: Path, site: Path) -> None:
    from gradguard.fixes import fix_of

    path = tmp_path / "project" / "train.py"
    path.parent.mkdir(parents=True)
    source = textwrap.dedent(TWO_FORWARDS.format(labels="labels"))
    path.write_text(source, "utf-8")
    run = ProjectRun([str(path.parent)], fix_of=fix_of,
                     libraries=Libraries((str(site),)))

    ((hazard,),) = run.file(str(path), source).found.values()
    assert hazard.fix is not None
    assert [(e.span.line, e.new_text) for e in hazard.fix.edits] == [
        (7, "labels.clone()")]


def test_a_tensor_passed_by_position_is_handed_over_as_a_copy_too(
        tmp_path: Path, site: Path) -> None:
    from gradguard.fixes import fix_of

    path = tmp_path / "project" / "train.py"
    path.parent.mkdir(parents=True)
    source = textwrap.dedent(TWO_FORWARDS.format(labels="labels").replace(
        "start_positions=", ""))
    path.write_text(source, "utf-8")
    run = ProjectRun([str(path.parent)], fix_of=fix_of,
                     libraries=Libraries((str(site),)))

    ((hazard,),) = run.file(str(path), source).found.values()
    assert hazard.fix is not None  # QAHead.forward(self, x, start_positions): the 2nd
    assert [(e.span.line, e.new_text) for e in hazard.fix.edits] == [
        (7, "labels.clone()")]


def test_each_call_given_its_own_labels_is_clean(tmp_path: Path, site: Path) -> None:
    found, _ = check(tmp_path / "project", site,
                     TWO_FORWARDS.format(labels="labels.clone()"))

    assert found == {}


def test_a_package_that_does_not_use_torch_is_not_followed(tmp_path: Path) -> None:
    folder = tmp_path / "site-packages"
    install(folder, "plainlib", {"__init__.py": "def scale_(t):\n    t.mul_(2)\n"},
            requires="")
    found, run = check(tmp_path / "project", folder, """\
        import torch
        from plainlib import scale_

        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        scale_(y)
        y.sum().backward()
    """)

    assert found == {}
    assert run.project.libraries is not None
    assert run.project.libraries.followed("plainlib") is None


def test_torch_is_never_followed_even_when_its_source_is_in_reach(tmp_path: Path) -> None:
    folder = tmp_path / "site-packages"
    install(folder, "torch", {"__init__.py": "def sigmoid(t):\n    return t\n"})

    assert Libraries((str(folder),)).followed("torch") is None


def test_a_library_file_is_parsed_only_when_a_call_reaches_it_and_its_reads_recorded(
        tmp_path: Path, site: Path) -> None:
    found, run = check(tmp_path / "project", site, """\
        import torch
        from layerlib import scale_

        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        scale_(y)
        y.sum().backward()
    """)
    layers = str(site / "layerlib" / "layers.py")
    analysis = run.file(str(tmp_path / "project" / "train.py"),
                        (tmp_path / "project" / "train.py").read_text("utf-8"))

    assert found and layers in analysis.read  # a changed library file re-checks the user's
    assert run.project.programs.get(layers) is not None
    assert str(site / "layerlib" / "unused.py") not in run.project.programs
    package = run.project.library_package(layers)
    assert package is not None and (package.name, package.version) == ("layerlib", "1.2")


def test_a_library_file_dropped_under_the_memory_budget_is_read_again(
        tmp_path: Path, site: Path) -> None:
    found, run = check(tmp_path / "project", site, TWO_FORWARDS.format(labels="labels"))
    layers = str(site / "layerlib" / "layers.py")

    assert layers in run.project.trim(1.0)
    path = tmp_path / "project" / "train.py"
    assert run.file(str(path), path.read_text("utf-8")).found.keys() == found.keys()


def test_the_project_s_own_module_wins_over_an_installed_one_of_the_same_name(
        tmp_path: Path, site: Path) -> None:
    (tmp_path / "project" / "layerlib").mkdir(parents=True)
    (tmp_path / "project" / "layerlib" / "__init__.py").write_text(
        "def scale_(t):\n    return t * 2\n", "utf-8")
    found, _ = check(tmp_path / "project", site, """\
        import torch
        from layerlib import scale_

        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        scale_(y)
        y.sum().backward()
    """)

    assert found == {}


def test_the_search_path_keeps_site_packages_and_leaves_the_standard_library(
        tmp_path: Path) -> None:
    import sysconfig

    folders = search_folders([sysconfig.get_paths()["stdlib"], str(tmp_path), ""])

    assert folders == (str(tmp_path),)


PROMPT = """\
    import torch
    import torch.nn as nn
    from transformers import CTRLConfig, CTRLModel

    model = CTRLModel(CTRLConfig(n_embd=16, n_layer=1, n_head=2, dff=32, vocab_size=50))
    prompt = nn.Parameter(torch.randn(1, 4, 16))
    hidden = model(inputs_embeds={prompt}).last_hidden_state
    hidden.pow(2).mean().backward()
"""


def test_the_installed_transformers_writing_into_a_trainable_prompt(tmp_path: Path) -> None:
    """CTRLModel scales ``inputs_embeds *=`` in place: a leaf parameter there raises."""
    pytest.importorskip("transformers")
    site = _site_of_transformers()
    found, _ = check(tmp_path / "project", site, PROMPT.format(prompt="prompt"))
    # A new tensor made from the prompt (an expand would be a view of the leaf: GG003).
    clean, _ = check(tmp_path / "fixed", site, PROMPT.format(prompt="prompt.repeat(2, 1, 1)"))

    (hazards,) = found.values()
    assert [(h.code, h.span.line) for h in hazards] == [("GG002", 7)]
    assert any(r.path and r.path.endswith("modeling_ctrl.py") for r in hazards[0].related)
    assert clean == {}


def _site_of_transformers() -> Path:
    """The folder the installed transformers is in (found, not imported)."""
    import importlib.util

    spec = importlib.util.find_spec("transformers")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent.parent


def test_a_cached_result_keys_an_installed_library_file_by_its_package_version() -> None:
    pytest.importorskip("transformers")
    from importlib import metadata

    from gradguard.analysis.libraries import version_stamp

    ctrl = _site_of_transformers() / "transformers" / "models" / "ctrl" / "modeling_ctrl.py"
    assert version_stamp(str(ctrl)) == f"transformers=={metadata.version('transformers')}"
    assert version_stamp(__file__) is None  # a project's file counts by its text


def test_a_virtual_environment_inside_the_project_holds_libraries_not_project_files(
        tmp_path: Path) -> None:
    # `python -m venv .venv` in the project's folder: its site-packages is inside the
    # project root, and what is installed there is still an installed library.
    project = tmp_path / "project"
    site = project / ".venv" / "lib" / "python3.11" / "site-packages"
    install(site, "layerlib", {"__init__.py": "from .layers import *\n", "layers.py": LAYERS})
    found, _ = check(project, site, """\
        import torch
        from layerlib import scale_

        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        scale_(y)
        y.sum().backward()
    """)

    assert list(found) == [str(project / "train.py")]
    (hazard,) = next(iter(found.values()))
    assert (hazard.code, hazard.span.line) == ("GG001", 6)


def test_a_library_file_checked_itself_is_reported_in_place(tmp_path: Path) -> None:
    # `gradguard check .venv/lib/.../layerlib/layers.py`: the user asked about that file.
    project = tmp_path / "project"
    site = project / ".venv" / "lib" / "python3.11" / "site-packages"
    install(site, "layerlib", {"__init__.py": "", "layers.py": LAYERS + '''

x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
scale_(y)
y.sum().backward()
'''})
    layers = site / "layerlib" / "layers.py"
    run = ProjectRun([str(project)], libraries=Libraries((str(site),)))
    found = run.file(str(layers), layers.read_text("utf-8")).found
    assert [(Path(p).name, h.code) for p, hs in found.items() for h in hs] == \
        [("layers.py", "GG001")]


def test_a_file_created_in_the_project_leaves_the_import_of_a_library_where_it_was(
        tmp_path: Path, site: Path) -> None:
    # The editor's analysis asks again, at each edit, for every file it read, the files
    # it looked for and did not find among them: those must stay missing, not become
    # empty modules that the import then resolves to when a new file makes every import
    # be resolved afresh.
    from gradguard.analysis.analyze import project_for
    from gradguard.analysis.incremental import IncrementalDocument

    project_root = tmp_path / "project"
    project_root.mkdir()
    script = textwrap.dedent("""\
        import torch
        from layerlib import scale_

        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        scale_(y)
        y.sum().backward()
    """)
    project = project_for([str(project_root)], libraries=Libraries((str(site),)))
    document = IncrementalDocument(path=str(project_root / "train.py"), project=project)
    assert [h.code for h in document.update(script)] == ["GG001"]

    (project_root / "notes.py").write_text("x = 1\n", "utf-8")
    project.forget(str(project_root / "notes.py"), created_or_deleted=True)

    assert [h.code for h in document.update(script + "# edited\n")] == ["GG001"]


def test_a_site_folder_inside_a_source_folder_on_the_path_owns_its_packages(
        tmp_path: Path) -> None:
    # PYTHONPATH=. in a project that keeps its virtual environment in .venv: both folders
    # are on the search path, and a package's file is in the inner one.
    site = tmp_path / ".venv" / "lib" / "site-packages"
    install(site, "layerlib", {"__init__.py": LAYERS})
    libraries = Libraries((str(tmp_path), str(site)))

    owner = libraries.owner(str(site / "layerlib" / "__init__.py"))

    assert owner is not None and owner[0] == "layerlib"
