"""Fixes keep what the code computes: torch runs every fixed example.

For each positive example (the rule cases and both seeds) the fixed code must run
backward and compute the same losses, to 1e-6, as the original did before it failed.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest

from gradguard.analysis.analyze import analyze_source
from gradguard.fixes import apply_edits, combine, fix_of, fix_text
from tests.rulecases import Case, case
from tests.rules import INVALID as RULE_INVALID
from tests.rules import VALID as RULE_VALID
from tests.torchrun import Outcome, run_scripts

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SEEDS = [Case(p.name, p.read_text()) for p in sorted(EXAMPLES.glob("*_seed.py"))]

# Hazards with no rewrite that is safe to make for the user, and why.
NO_SAFE_FIX = {
    "GG003: writing into a view of a leaf":
        "update the leaf under no_grad, or write a copy: only the author knows",
    "GG003: writing into an output of unbind": "the pieces live in a tuple, not a name",
    "GG003: a view made under no_grad written with grad on":
        "the write reaches the view's base, which rebinding the view would not change",
    "GG004: a manual update over named_parameters() between two backwards":
        "the update sits in a loop under no_grad: where it belongs is said in the message",
    "GG004: an embedding with max_norm renormalises the weight an earlier op saved":
        "the layer's own call edits the weight: which earlier use should get a copy, only "
        "the author knows",
    "GG005: the output of sigmoid zeroed through .data before backward":
        "the write goes through `.data` itself: a copy or a write after backward, only the "
        "author knows",
    "GG005: a module rescales its saved activation through .data":
        "the write goes through `.data` itself: a copy or a write after backward, only the "
        "author knows",
}
# Writes through .data raise nothing (GG005): their originals do not fail, so their fixes
# are held to torch through .detach() instead (the same storage under autograd's own
# version counter), which must then run backward without the in-place error.
SILENT = [c for c in RULE_INVALID if {code for _, code in c.expected} == {"GG005"}]
FIXABLE = [c for c in RULE_INVALID if c.name not in NO_SAFE_FIX and c not in SILENT] + SEEDS
SILENT_FIXABLE = [c for c in SILENT if c.name not in NO_SAFE_FIX]


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Outcome]:
    pytest.importorskip("torch")
    scripts = []
    for example in FIXABLE:
        scripts.append((f"original: {example.name}", example.source))
        scripts.append((f"fixed: {example.name}", fix_text(example.source).text))
    return run_scripts(scripts)


@pytest.mark.parametrize("example", FIXABLE, ids=lambda c: c.name)
def test_every_hazard_of_a_positive_example_has_a_fix(example: Case) -> None:
    hazards = analyze_source(example.source, fix_of=fix_of)
    assert hazards and all(h.fix is not None for h in hazards)


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.parametrize("example", FIXABLE, ids=lambda c: c.name)
def test_fixed_code_runs_backward_and_computes_the_same_losses(
        example: Case, outcomes: dict[str, Outcome]) -> None:
    original = outcomes[f"original: {example.name}"]
    fixed = outcomes[f"fixed: {example.name}"]
    assert original.error is not None, "the original was expected to fail"
    assert fixed.error is None, fixed.error
    # A write autograd refuses at once fails before any backward: nothing to compare.
    assert fixed.values and len(fixed.values) >= len(original.values)
    for before, after in zip(original.values, fixed.values, strict=False):
        assert math.isclose(before, after, rel_tol=1e-6, abs_tol=1e-6)


@pytest.mark.parametrize("example", FIXABLE, ids=lambda c: c.name)
def test_fixing_is_idempotent(example: Case) -> None:
    once = fix_text(example.source)
    assert once.remaining == []
    twice = fix_text(once.text)
    assert (twice.text, twice.fixed) == (once.text, 0)


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.parametrize("example", SILENT_FIXABLE, ids=lambda c: c.name)
def test_a_fixed_write_through_data_no_longer_reaches_the_saved_tensor(example: Case) -> None:
    pytest.importorskip("torch")
    once = fix_text(example.source)
    assert once.remaining == [] and once.text != example.source
    assert fix_text(once.text).text == once.text
    scripts = [("original", example.source.replace(".data", ".detach()")),
               ("fixed", once.text.replace(".data", ".detach()"))]
    outcome = run_scripts(scripts)
    assert outcome["original"].error is not None
    assert outcome["fixed"].error is None, outcome["fixed"].error
    assert outcome["fixed"].values


@pytest.mark.parametrize("name", sorted(NO_SAFE_FIX))
def test_hazards_without_a_safe_rewrite_offer_no_fix(name: str) -> None:
    [example] = [c for c in RULE_INVALID if c.name == name]
    hazards = analyze_source(example.source, fix_of=fix_of)
    assert hazards and all(h.fix is None for h in hazards)
    assert fix_text(example.source).text == example.source


@pytest.mark.parametrize("example", RULE_VALID, ids=lambda c: c.name)
def test_safe_code_is_left_as_it_is(example: Case) -> None:
    result = fix_text(example.source)
    assert (result.text, result.fixed) == (example.source, 0)


SEVERAL = case("several hazards in one file", """
    import torch
    import torch.nn.functional as F

    x = torch.randn(4, requires_grad=True)
    a = torch.sigmoid(x)
    a.relu_()
    b = torch.exp(x)
    b += 1
    c = torch.tanh(x)
    F.relu(c, inplace=True)
    (a.sum() + b.sum() + c.sum()).backward()
""")


def test_fix_all_is_one_consistent_edit() -> None:
    hazards = analyze_source(SEVERAL.source, fix_of=fix_of)
    assert len(hazards) == 3
    edits = combine(h.fix for h in hazards if h.fix is not None)
    fixed = apply_edits(SEVERAL.source, edits)
    assert analyze_source(fixed) == []
    assert fixed == textwrap.dedent("""
        import torch
        import torch.nn.functional as F

        x = torch.randn(4, requires_grad=True)
        a = torch.sigmoid(x)
        a = a.relu()
        b = torch.exp(x)
        b = b + 1
        c = torch.tanh(x)
        c = F.relu(c)
        (a.sum() + b.sum() + c.sum()).backward()
    """).lstrip("\n")


@pytest.mark.parametrize(("line", "fixed"), [
    ("y = x2.add_(1)", "y = x2 = x2.add(1)"),
    ("x2.add_(1).mul_(3)", "x2 = x2.add(1).mul_(3)"),
    ("out = [x2.add_(1)]", "out = [(x2 := x2.add(1))]"),
    ("x2 *= a + 1", "x2 = x2 * (a + 1)"),
])
def test_out_of_place_rewrites_keep_every_name_meaning_what_it_meant(
        line: str, fixed: str) -> None:
    source = textwrap.dedent(f"""
        import torch
        x = torch.randn(4, requires_grad=True)
        a = torch.randn(4)
        x2 = torch.exp(x)
        {line}
    """)
    [hazard] = analyze_source(source, fix_of=fix_of)
    assert hazard.fix is not None
    assert apply_edits(source, hazard.fix.edits).splitlines()[5] == fixed


# -- Leaves, unbind pieces, optimizer steps: what each fix turns the code into ----------
#
# A leaf that requires grad is written under torch.no_grad() when it is state (a
# parameter, a tensor updated from its gradient, one whose .grad the code reads) and out
# of place when it is a step of the computation; never under no_grad when a backward
# saved it. Pieces of x.unbind() become single views, so a write into one still reaches
# x. An optimizer step moves after the statement of its block that holds the backward.

REWRITES = [
    (case("GG002 fix: a parameter updated from its gradient, under no_grad", """
        import torch
        w = torch.randn(3, requires_grad=True)
        (w * 2).sum().backward()
        w -= 0.1 * w.grad
        (w * 3).sum().backward()
    """), """
        import torch
        w = torch.randn(3, requires_grad=True)
        (w * 2).sum().backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
        (w * 3).sum().backward()
    """),
    (case("GG002 fix: a module's weight set by an index write, under no_grad", """
        import torch
        import torch.nn as nn
        conv = nn.Conv2d(2, 3, 3)
        conv.weight[:, :, :, :] = torch.ones(3, 2, 3, 3)
        conv(torch.randn(1, 2, 5, 5)).sum().backward()
    """), """
        import torch
        import torch.nn as nn
        conv = nn.Conv2d(2, 3, 3)
        with torch.no_grad():
            conv.weight[:, :, :, :] = torch.ones(3, 2, 3, 3)
        conv(torch.randn(1, 2, 5, 5)).sum().backward()
    """),
    (case("GG002 fix: a leaf whose .grad is read stays the leaf, under no_grad", """
        import torch
        c = torch.randn(2, 4, requires_grad=True)
        c.index_copy_(1, torch.tensor([1]), torch.zeros(2, 1))
        c.sum().backward()
        print(c.grad.shape)
    """), """
        import torch
        c = torch.randn(2, 4, requires_grad=True)
        with torch.no_grad():
            c.index_copy_(1, torch.tensor([1]), torch.zeros(2, 1))
        c.sum().backward()
        print(c.grad.shape)
    """),
    (case("GG002 fix: an activation computed on a leaf, out of place", """
        import torch
        import torch.nn.functional as F
        x = torch.randn(4, 6, requires_grad=True)
        x = F.relu(x, inplace=True)
        x.sum().backward()
    """), """
        import torch
        import torch.nn.functional as F
        x = torch.randn(4, 6, requires_grad=True)
        x = F.relu(x)
        x.sum().backward()
    """),
    (case("GG002 fix: a leaf a matmul saved is never written under no_grad", """
        import torch
        w = torch.randn(4, 4, requires_grad=True)
        h = torch.randn(2, 4, requires_grad=True)
        out = h @ w
        h += 1
        (out.sum() + h.sum()).backward()
    """), """
        import torch
        w = torch.randn(4, 4, requires_grad=True)
        h = torch.randn(2, 4, requires_grad=True)
        out = h @ w
        h = h + 1
        (out.sum() + h.sum()).backward()
    """),
    (case("GG003 fix: the pieces of unbind made as single views", """
        import torch
        root = torch.arange(9.).reshape(3, 3).requires_grad_()
        x = root.clone()
        rows = x.unbind(1)
        rows[0].mul_(2)
        x.sum().backward()
    """), """
        import torch
        root = torch.arange(9.).reshape(3, 3).requires_grad_()
        x = root.clone()
        rows = tuple(x.select(1, i) for i in range(x.size(1)))
        rows[0].mul_(2)
        x.sum().backward()
    """),
    (case("GG003 fix: a hooked module's output added to out of place", """
        import torch
        import torch.nn as nn

        norm = nn.BatchNorm1d(4)
        norm.register_full_backward_hook(lambda module, grad_in, grad_out: None)
        x = torch.randn(3, 4, requires_grad=True)
        out = norm(x)
        out += x
        out.sum().backward()
    """), """
        import torch
        import torch.nn as nn

        norm = nn.BatchNorm1d(4)
        norm.register_full_backward_hook(lambda module, grad_in, grad_out: None)
        x = torch.randn(3, 4, requires_grad=True)
        out = norm(x)
        out = out + x
        out.sum().backward()
    """),
    (case("GG003 fix: a custom Function's output (its input as it was) scaled out of place", """
        import torch

        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.mul_(2)

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        h = torch.randn(4, requires_grad=True) * 1
        y = Double.apply(h)
        y *= 3
        y.sum().backward()
    """), """
        import torch

        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.mul_(2)

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        h = torch.randn(4, requires_grad=True) * 1
        y = Double.apply(h)
        y = y * 3
        y.sum().backward()
    """),
    (case("GG004 fix: the step moved after the if that holds the later backward", """
        import torch
        import torch.nn as nn

        D = nn.Linear(4, 1)
        opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
        out = D(torch.randn(2, 4, requires_grad=True))
        loss_d, loss_g = out.mean(), -out.mean()
        loss_d.backward(retain_graph=True)
        opt_d.step()
        if loss_g is not None:
            loss_g.backward()
    """), """
        import torch
        import torch.nn as nn

        D = nn.Linear(4, 1)
        opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
        out = D(torch.randn(2, 4, requires_grad=True))
        loss_d, loss_g = out.mean(), -out.mean()
        loss_d.backward(retain_graph=True)
        if loss_g is not None:
            loss_g.backward()
        opt_d.step()
    """),
]


@pytest.fixture(scope="module")
def rewritten() -> dict[str, Outcome]:
    pytest.importorskip("torch")
    return run_scripts([(example.name, textwrap.dedent(fixed).lstrip("\n"))
                        for example, fixed in REWRITES])


@pytest.mark.parametrize(("example", "fixed"), REWRITES, ids=lambda c: getattr(c, "name", ""))
def test_a_leaf_an_unbind_piece_or_a_step_is_fixed_as_the_code_means(
        example: Case, fixed: str) -> None:
    result = fix_text(example.source)
    assert result.remaining == []
    assert result.text == textwrap.dedent(fixed).lstrip("\n")


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.parametrize(("example", "fixed"), REWRITES, ids=lambda c: getattr(c, "name", ""))
def test_those_fixes_run_backward_under_torch(example: Case, fixed: str,
                                              rewritten: dict[str, Outcome]) -> None:
    outcome = rewritten[example.name]
    assert outcome.error is None, outcome.error
    assert outcome.values


LEFT_WITH_A_MESSAGE = [
    case("GG002: a write sharing its line with a for is not re-indented", """
        import torch
        import torch.nn as nn
        model = nn.Linear(2, 2)
        for p in model.parameters(): p.add_(1)
        model(torch.randn(1, 2)).sum().backward()
    """),
    case("GG004: the backward that needs the step runs again in the next pass", """
        import torch
        import torch.nn as nn

        cell = nn.Linear(4, 4)
        opt = torch.optim.SGD(cell.parameters(), lr=0.1)
        h = torch.randn(1, 4, requires_grad=True)
        for _ in range(3):
            h = torch.tanh(cell(h))
            h.sum().backward(retain_graph=True)
            opt.step()
    """),
]


ALIASING_VIEWS = [
    case("GG003: a custom Function's output that is its input, which is read later", """
        import torch

        class Same(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        h = torch.randn(4, requires_grad=True) * 1
        y = Same.apply(h)
        y += 1
        (y * h).sum().backward()
    """),
    case("GG003: a hooked module's input written inside its forward", """
        import torch
        import torch.nn as nn

        class Shift(nn.Module):
            def forward(self, x):
                x += 1
                return x * 2

        shift = Shift()
        shift.register_full_backward_hook(lambda module, grad_in, grad_out: None)
        h = torch.randn(4, requires_grad=True) * 1
        shift(h).sum().backward()
    """),
]


@pytest.mark.parametrize("example", ALIASING_VIEWS, ids=lambda c: c.name)
def test_a_view_whose_write_was_meant_for_the_tensor_behind_it_is_not_rebound(
        example: Case) -> None:
    # Rebound out of place, the name would stop changing the tensor behind the view
    # (read later by the code, or the caller's): only the author knows which is meant.
    [hazard] = analyze_source(example.source, fix_of=fix_of)
    assert hazard.code == "GG003"
    assert hazard.fix is None


@pytest.mark.parametrize("example", LEFT_WITH_A_MESSAGE, ids=lambda c: c.name)
def test_where_no_fix_is_safe_the_code_is_left_and_the_message_says_what_to_do(
        example: Case) -> None:
    [hazard] = analyze_source(example.source, fix_of=fix_of)
    assert hazard.fix is None
    assert "no_grad" in hazard.message or "runs again after it" in hazard.message
    assert fix_text(example.source).text == example.source
