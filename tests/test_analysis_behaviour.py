"""How findings are reported: confidence, suppression comments, chains, bad input."""

from __future__ import annotations

import textwrap
import threading

import pytest

from gradguard.analysis.analyze import analyze_source
from gradguard.analysis.syntax import SourceError
from gradguard.config import Selection

UNCERTAIN = textwrap.dedent("""
    import torch

    def postprocess(scores):
        probs = torch.sigmoid(scores)
        probs.clamp_(0.05, 0.95)
        return probs
""")


def test_a_hazard_that_needs_an_unknown_argument_to_require_grad_is_opt_in() -> None:
    assert analyze_source(UNCERTAIN) == []
    [hazard] = analyze_source(UNCERTAIN, Selection(uncertain=True))
    assert (hazard.code, hazard.span.line, hazard.severity) == ("GG001", 6, "warning")
    assert hazard.confidence == "medium"
    assert hazard.message.endswith("(if these tensors require grad)")


def test_a_modules_forward_input_is_taken_to_require_grad() -> None:
    source = textwrap.dedent("""
        import torch
        from torch import nn

        class Gate(nn.Module):
            def forward(self, x):
                g = torch.sigmoid(x)
                g.mul_(2)
                return g
    """)
    [hazard] = analyze_source(source)
    assert (hazard.span.line, hazard.severity) == (8, "error")


SIGMOID_THEN_RELU_ = textwrap.dedent("""
    import torch
    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y.relu_(){comment}
    y.sum().backward()
""")


@pytest.mark.parametrize("comment", [
    "  # gradguard: ignore[GG001]",
    "  # gradguard: ignore",
    "  # noqa: GG001",
    "  # noqa",
    "  # gradguard: ignore[GG002, GG001]",
])
def test_suppression_comments_silence_the_line(comment: str) -> None:
    assert analyze_source(SIGMOID_THEN_RELU_.format(comment=comment)) == []


@pytest.mark.parametrize("comment", ["  # gradguard: ignore[GG002]", "  # noqa: E501"])
def test_suppressing_another_code_keeps_the_finding(comment: str) -> None:
    [hazard] = analyze_source(SIGMOID_THEN_RELU_.format(comment=comment))
    assert hazard.code == "GG001"


def test_select_and_ignore_choose_rules_by_prefix() -> None:
    source = SIGMOID_THEN_RELU_.format(comment="")
    assert analyze_source(source, Selection(ignore=frozenset({"GG001"}))) == []
    assert analyze_source(source, Selection(select=frozenset({"GG002"}))) == []
    assert len(analyze_source(source, Selection(select=frozenset({"GG"})))) == 1


def test_a_chain_of_inplace_calls_on_one_tensor_is_reported_once() -> None:
    source = textwrap.dedent("""
        import torch
        x = torch.randn(3, requires_grad=True)
        y = torch.exp(x)
        y.add_(1).mul_(2).clamp_(0, 1)
        y.sum().backward()
    """)
    [hazard] = analyze_source(source)
    assert hazard.message.startswith("`y.add_()` overwrites the output of `torch.exp`")


def test_dropout_with_p_zero_writes_nothing() -> None:
    source = textwrap.dedent("""
        import torch
        from torch import nn
        drop = nn.Dropout(0.0, inplace=True)
        x = torch.randn(3, requires_grad=True)
        p = torch.softmax(x, dim=0)
        q = drop(p)
        q.sum().backward()
    """)
    assert analyze_source(source) == []
    assert len(analyze_source(source.replace("0.0", "0.1"))) == 1


def test_a_syntax_error_is_a_clear_error_with_its_line() -> None:
    with pytest.raises(SourceError) as caught:
        analyze_source("import torch\ndef f(x):\n    y = torch.sigmoid(x\n    y.relu_()\n")
    assert "syntax error" in str(caught.value)
    assert caught.value.line >= 3


def test_text_without_any_inplace_candidate_is_not_even_parsed() -> None:
    # Not valid Python, but nothing in it could be a hazard: no parse, no error.
    assert analyze_source("def f(:\n    return torch.sigmoid(x)\n") == []


def test_brackets_nested_deeper_than_python_accepts_are_a_syntax_error() -> None:
    nested = "import torch\nx = " + "(" * 300 + "1" + ")" * 300 + "\nx += 1\n"
    with pytest.raises(SourceError, match="too many nested parentheses") as error:
        analyze_source(nested)
    assert error.value.line == 2


def test_an_expression_nested_too_deeply_to_read_is_skipped_and_the_rest_analysed() -> None:
    nested = ("import torch\na = torch.randn(3, requires_grad=True)\nb = a.exp()\n"
              "y = " + "-(" * 100 + "b" + ")" * 100 + "\nb += 1\nb.sum().backward()\n")
    assert [(h.code, h.span.line) for h in analyze_source(nested)] == [("GG901", 4),
                                                                       ("GG001", 5)]


GATE_WITH_CHECK = textwrap.dedent("""
    import torch
    from torch import nn

    class Gate(nn.Module):
        def forward(self, x, y):
            same = x.shape[0] == y.shape[0] == 3
            g = torch.sigmoid(x)
            g.mul_(2)
            return g
""")


def test_a_chained_comparison_does_not_end_the_analysis_of_its_method() -> None:
    [hazard] = analyze_source(GATE_WITH_CHECK)
    assert hazard.span.line == 9


def test_a_plain_comparison_before_the_write_is_no_different() -> None:
    [hazard] = analyze_source(GATE_WITH_CHECK.replace(" == 3", ""))
    assert hazard.span.line == 9


def test_a_negated_condition_is_evaluated_once_not_once_per_not() -> None:
    # Evaluating the operand of each ``not`` twice made this take 2**40 steps.
    source = GATE_WITH_CHECK.replace("x.shape[0] == y.shape[0] == 3",
                                     "not " * 40 + "x.shape[0]")
    done: list[int] = []
    worker = threading.Thread(target=lambda: done.append(len(analyze_source(source))),
                              daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert done == [1]


def test_a_literal_python_cannot_convert_is_the_syntax_error_python_gives() -> None:
    huge = "1" * 5000  # past the 4,300 digits Python turns into an int
    with pytest.raises(SourceError) as raised:
        analyze_source(GATE_WITH_CHECK.replace("g.mul_(2)", f"g.mul_({huge})"))
    assert raised.value.line == 9
    assert "4300 digits" in str(raised.value)
