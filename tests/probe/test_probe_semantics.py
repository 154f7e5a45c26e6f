"""What counts as a finding: a saved tensor overwritten while a backward still needs it.

Reported as soon as the write happens, and kept when the run stops before backward
(a crash, an exception) or when backward's error is caught; confirmed by torch's error
when backward meets it. Dropped when it proves harmless: the overwritten tensor's graph
is discarded without backward, or was already used (retain_graph) and never is again.
Writes autograd cannot see (``.data``) are reported when backward really uses the
overwritten values, and confirmed only when the gradient, recomputed without the write,
differs; writes into memory next to a saved tensor (the gate chunks ATen's GRU and
LSTM cells write in place) are not writes into it. The saving op may be a custom
autograd.Function or live in another file; a write that hits several saved tensors (an
optimizer step) is one finding.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gradguard.probe.runner import ProbeResult
from tests.probe.probekit import INPLACE_ERROR, line_of, probe_all, torch_installed, write

pytestmark = [pytest.mark.torch, pytest.mark.slow,
              pytest.mark.skipif(not torch_installed(), reason="the probe runs under torch")]

SOURCES = {
    "data_write_then_backward": """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        y.data.mul_(2)
        y.sum().backward()
    """,
    "data_write_of_the_same_values": """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        y.data.mul_(1)
        y.sum().backward()
    """,
    "data_write_backward_does_not_depend_on": """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.relu(x)
        y.data.mul_(3)  # relu's backward reads only the sign of its output
        y.sum().backward()
    """,
    "data_write_into_a_custom_functions_input": """
        import torch

        class Cube(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return 3 * x ** 2 * grad

        a = torch.randn(3, requires_grad=True)
        h = a * 1
        out = Cube.apply(h)
        h.data.add_(1)
        out.sum().backward()
    """,
    "data_write_after_the_saving_output_is_gone": """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        alias = y.data
        loss = y.sum()
        del y  # nothing left that leads the probe to sigmoid's node before backward
        alias.mul_(2)
        loss.backward()
    """,
    "gate_chunks_written_inside_aten_cells": """
        import torch
        import torch.nn as nn
        x, h = torch.randn(4, 8), torch.randn(4, 16)
        out = nn.GRUCell(8, 16)(x, h)
        hx, cx = nn.LSTMCell(8, 16)(x)
        (out.sum() + hx.sum() + cx.sum()).backward()
    """,
    "data_write_without_backward": """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        y.data.mul_(2)
        y.sum().backward() if False else None
    """,
    "discarded_graph": """
        import torch
        x = torch.randn(4, requires_grad=True)
        for step in range(3):
            scratch = torch.sigmoid(x)
            scratch.mul_(2)
            loss = torch.sigmoid(x).sum()
            loss.backward()
    """,
    "retained_graph_never_used_again": """
        import torch
        import torch.nn as nn
        net = nn.Linear(4, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        loss = net(torch.randn(2, 4, requires_grad=True)).sum()
        loss.backward(retain_graph=True)
        opt.step()
    """,
    "crash_before_backward": """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        y.relu_()
        raise ValueError("the data loader broke")
    """,
    "backward_error_caught": """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.tanh(x)
        y.add_(1)
        try:
            y.sum().backward()
        except RuntimeError:
            print("caught it")
    """,
    "custom_function": """
        import torch

        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return 2 * x * grad

        a = torch.randn(3, requires_grad=True)
        h = a * 1
        out = Square.apply(h)
        h.add_(1)
        out.sum().backward()
    """,
    "helpers": """
        import torch


        def squash(t):
            return torch.sigmoid(t)
    """,
    "uses_helpers": """
        import torch
        from helpers import squash
        x = torch.randn(4, requires_grad=True)
        y = squash(x)
        y.relu_()
        y.sum().backward()
    """,
    "one_step_two_layers": """
        import torch
        import torch.nn as nn
        net = nn.Sequential(
            nn.Linear(4, 8),
            nn.Tanh(),
            nn.Linear(8, 1),
        )
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        x = torch.randn(2, 4, requires_grad=True)
        net(x).sum().backward()
        out = net(x)
        opt.step()
        out.sum().backward()
    """,
}
RUN = [name for name in SOURCES if name != "helpers"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("semantics")
    return {name: write(directory, f"{name}.py", source) for name, source in SOURCES.items()}


@pytest.fixture(scope="module")
def results(files: dict[str, Path]) -> dict[str, ProbeResult]:
    by_target = probe_all([str(files[name]) for name in RUN])
    return {name: by_target[str(files[name])] for name in RUN}


def test_a_data_write_is_reported_when_backward_uses_the_overwritten_values(
        results: dict[str, ProbeResult], files: dict[str, Path]) -> None:
    result = results["data_write_then_backward"]
    [finding] = result.findings
    assert finding["line"] == line_of(files["data_write_then_backward"], "y.data.mul_(2)")
    assert finding["code"] == "GG005"
    assert "through `.data` or another alias autograd does not track" in finding["message"]
    # Proven in the child: sigmoid's backward run again with the values from before the
    # write gives other gradients.
    assert "gradients are silently wrong (confirmed: recomputed without the write, they " \
           "differ by up to " in finding["message"]
    assert finding["severity"] == "error"
    assert finding["torch_error"] is None  # torch says nothing: that is the bug
    assert result.status == "ok"


@pytest.mark.parametrize("name", ["data_write_of_the_same_values",
                                  "data_write_backward_does_not_depend_on",
                                  "gate_chunks_written_inside_aten_cells"])
def test_a_write_autograd_cannot_see_is_no_finding_when_the_gradients_come_out_the_same(
        results: dict[str, ProbeResult], name: str) -> None:
    assert (results[name].findings, results[name].error) == ([], None)


def test_a_silent_write_into_a_custom_functions_input_is_confirmed_through_its_ctx(
        results: dict[str, ProbeResult], files: dict[str, Path]) -> None:
    path = files["data_write_into_a_custom_functions_input"]
    [finding] = results["data_write_into_a_custom_functions_input"].findings
    assert finding["line"] == line_of(path, "h.data.add_(1)")
    assert finding["message"].startswith("`add_` writes into an input of `Cube`")
    assert "(confirmed: recomputed without the write" in finding["message"]
    assert finding["severity"] == "error"


def test_a_silent_write_the_probe_cannot_recompute_is_a_warning_not_a_confirmation(
        results: dict[str, ProbeResult], files: dict[str, Path]) -> None:
    path = files["data_write_after_the_saving_output_is_gone"]
    [finding] = results["data_write_after_the_saving_output_is_gone"].findings
    assert finding["line"] == line_of(path, "alias.mul_(2)")
    assert finding["severity"] == "warning"
    assert "probably wrong (not confirmed" in finding["message"]
    assert "(confirmed" not in finding["message"]


@pytest.mark.parametrize("name", ["data_write_without_backward", "discarded_graph",
                                  "retained_graph_never_used_again"])
def test_an_overwrite_no_backward_ever_needs_is_not_a_finding(
        results: dict[str, ProbeResult], name: str) -> None:
    assert (results[name].findings, results[name].error) == ([], None)


def test_a_clobber_survives_a_crash_before_backward(results: dict[str, ProbeResult],
                                                    files: dict[str, Path]) -> None:
    result = results["crash_before_backward"]
    [finding] = result.findings
    assert finding["line"] == line_of(files["crash_before_backward"], "y.relu_()")
    assert finding["torch_error"] is None
    assert result.status == "raised"
    assert "ValueError: the data loader broke" in (result.error or "")


def test_a_clobber_whose_backward_error_the_code_catches_is_still_reported(
        results: dict[str, ProbeResult], files: dict[str, Path]) -> None:
    result = results["backward_error_caught"]
    [finding] = result.findings
    assert finding["line"] == line_of(files["backward_error_caught"], "y.add_(1)")
    assert INPLACE_ERROR in finding["torch_error"]
    assert (result.status, result.stdout) == ("ok", "caught it\n")


def test_a_custom_function_is_named_as_the_saving_op(results: dict[str, ProbeResult],
                                                     files: dict[str, Path]) -> None:
    [finding] = results["custom_function"].findings
    assert finding["line"] == line_of(files["custom_function"], "h.add_(1)")
    assert finding["message"].startswith("`add_` overwrites an input of `Square`")
    assert finding["related"][0]["line"] == line_of(files["custom_function"], "Square.apply(h)")


def test_a_save_in_another_file_is_located_there(results: dict[str, ProbeResult],
                                                 files: dict[str, Path]) -> None:
    [finding] = results["uses_helpers"].findings
    helpers = files["helpers"]
    assert (finding["path"], finding["line"]) == (
        str(files["uses_helpers"]), line_of(files["uses_helpers"], "y.relu_()"))
    assert (finding["related"][0]["path"], finding["related"][0]["line"]) == (
        str(helpers), line_of(helpers, "return torch.sigmoid(t)"))
    assert f"saved for backward at {helpers}:" in finding["message"]


def test_one_optimizer_step_over_two_saved_weights_is_one_finding(
        results: dict[str, ProbeResult], files: dict[str, Path]) -> None:
    path = files["one_step_two_layers"]
    [finding] = results["one_step_two_layers"].findings
    assert finding["code"] == "GG004"
    assert finding["line"] == line_of(path, "opt.step()")
    assert finding["message"].startswith("`optimizer.step()` (`add_`) updates parameter `")
    assert finding["message"].endswith("[+1 more saved tensors, see related]")
    saves = [r["line"] for r in finding["related"] if "saved here" in r["message"]]
    assert sorted(saves) == [line_of(path, "nn.Linear(4, 8)"), line_of(path, "nn.Linear(8, 1)")]
    assert INPLACE_ERROR in finding["torch_error"]
