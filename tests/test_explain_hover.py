"""Hover, the pure function: a text and a position to what autograd keeps of the torch
call there, said from the facts tables (``gradguard.explain.hover.hover_at``)."""

from __future__ import annotations

import dataclasses

from gradguard.explain.hover import Hover, hover_at
from gradguard.facts import load

MODEL = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(3, 3, 3)

    def forward(self, x, y):
        s = torch.sigmoid(x)
        e = s.exp()
        p = x * y
        q = 2 * x
        p *= y
        a, b = torch.split(x, 2)
        v = x.view(-1)
        pieces = torch.tensor_split(x, 2)
        m = F.relu(x, inplace=True)
        n = np.exp(3)
        k = 1 + 2
        return self.act(self.conv(x))
'''


def at(text: str, line_text: str, word: str, nth: int = 0) -> Hover | None:
    """The hover on the first letter of ``word`` in the line that starts with
    ``line_text`` (after its indentation)."""
    lines = text.splitlines()
    line = next(i for i, t in enumerate(lines) if t.strip().startswith(line_text))
    column = -1
    for _ in range(nth + 1):
        column = lines[line].index(word, column + 1)
    return hover_at(text, line, column)


def shown(text: str, line_text: str, word: str, nth: int = 0) -> str:
    found = at(text, line_text, word, nth)
    assert found is not None, f"no hover on {word!r} in {line_text!r}"
    return found.markdown


def test_a_torch_function_shows_what_its_backward_keeps_with_the_yaml_formula() -> None:
    text = shown(MODEL, "s = torch.sigmoid", "sigmoid")
    assert "runs `aten::sigmoid`" in text
    assert "**Backward keeps** its result." in text
    assert "`aten::sigmoid`: the gradient of `self` reads `result`." in text
    assert "```yaml\n- name: sigmoid(Tensor self) -> Tensor\n" \
        "  self: sigmoid_backward(grad, result)\n```" in text
    assert "**In place:** no." in text
    assert "**Returns** a new tensor." in text
    assert "to its result or any view of it before backward runs" in text


def test_the_hover_covers_the_called_name() -> None:
    found = at(MODEL, "s = torch.sigmoid", "sigmoid")
    assert found is not None
    line = MODEL.splitlines()[found.line]
    assert line[found.column:found.end_column] == "sigmoid"


def test_a_tensor_method_is_named_by_its_receiver() -> None:
    text = shown(MODEL, "e = s.exp", "exp")
    assert "**`Tensor.exp`** runs `aten::exp`" in text
    assert "  self: grad * result.conj()" in text


def test_an_operator_names_its_operands_and_when_each_is_kept() -> None:
    text = shown(MODEL, "p = x * y", "*")
    assert "**Backward keeps** `x` (only when `y` requires grad) and `y` " \
        "(only when `x` requires grad)." in text
    assert "  self: mul_tensor_backward(grad, other, self.scalar_type())" in text
    assert "- `x` or any view of its storage (only when `y` requires grad)" in text


def test_a_number_on_the_left_runs_the_reflected_method_which_keeps_nothing() -> None:
    text = shown(MODEL, "q = 2 * x", "*")
    assert "Tensor.__rmul__" in text
    assert "**Backward keeps** none of its operands, nor its result." in text


def test_an_augmented_assignment_is_in_place_and_keeps_its_own_copy() -> None:
    text = shown(MODEL, "p *= y", "*=")
    assert "**Backward keeps** `y` (only when `p` requires grad)." in text
    # In the yaml's words: torch clones the old self before writing it.
    assert "`aten::mul_.Tensor` (the formula of `mul.Tensor`): the gradient of `self` " \
        "reads `other`; the gradient of `other` reads a copy of the old `self`." in text
    assert "**In place:** yes. It writes `p`" in text
    assert "**Returns** `p` itself, written in place." in text


def test_views_say_which_kind_they_are() -> None:
    split = shown(MODEL, "a, b = torch.split", "split")
    assert "the outputs of one op that returns several views: autograd refuses an " \
        "in-place write to any of them" in split
    view = shown(MODEL, "v = x.view", "view")
    assert "**Returns** a view of `x`: it shares `x`'s storage and version counter" in view
    pieces = shown(MODEL, "pieces = torch.tensor_split", "tensor_split")
    assert "each a plain view: writing one is a write to `x`" in pieces


def test_an_inplace_switch_given_as_a_literal_is_followed() -> None:
    text = shown(MODEL, "m = F.relu", "relu")
    assert "**`torch.nn.functional.relu`** runs `aten::relu_`" in text
    assert "**In place:** yes. It writes `x`" in text
    assert "to `x` (its result) or any view of its storage" in text


def test_a_layer_constructor_shows_what_a_call_of_the_layer_does() -> None:
    text = shown(MODEL, "self.act = nn.ReLU", "ReLU")
    assert "**`torch.nn.ReLU(inplace=True)`**: calling it runs `aten::relu_`" in text
    assert "  self: threshold_backward(grad, result, 0)" in text


def test_a_layer_attribute_is_the_layer_the_class_builds_there() -> None:
    text = shown(MODEL, "return self.act", "act")
    assert "**`torch.nn.ReLU(inplace=True)`**: calling it runs `aten::relu_`" in text
    assert "It writes `self.conv(x)`" in text
    conv = shown(MODEL, "return self.act", "conv")
    assert "**Backward keeps** `x` and its weight." in conv
    assert "the gradient of `input, weight, bias` reads `input` and `weight`" in conv


def test_calls_that_are_not_torch_get_no_hover() -> None:
    assert at(MODEL, "n = np.exp", "exp") is None  # numpy's, through its import
    assert at(MODEL, "k = 1 + 2", "+") is None  # two literals
    assert at(MODEL, "super().__init__", "__init__") is None
    assert at(MODEL, "def forward", "forward") is None


def test_columns_are_code_points_after_wide_characters() -> None:
    text = 'import torch\ny = ("模型😀", torch.sigmoid(x))\n'
    column = text.splitlines()[1].index("sigmoid")
    found = hover_at(text, 1, column)
    assert found is not None and (found.column, found.end_column) == (column, column + 7)


def test_a_line_is_still_explained_while_the_file_does_not_parse() -> None:
    text = "import torch.nn.functional as G\n\ndef f(x):\n    y = G.softmax(x, -1)\n    z = (\n"
    found = hover_at(text, 3, text.splitlines()[3].index("softmax"))
    assert found is not None
    assert "`aten::_softmax`" in found.markdown
    assert "  self: _softmax_backward_data(grad, result, dim, self.scalar_type())" in \
        found.markdown


def test_the_text_follows_the_facts_it_is_given() -> None:
    """Nothing is said about an op that the tables do not say: the same call, with a
    table in which sigmoid keeps nothing, is explained as keeping nothing."""
    facts = load()
    sigmoid = facts.functions["torch.sigmoid"]
    changed = dataclasses.replace(facts, functions={
        **facts.functions, "torch.sigmoid": dataclasses.replace(sigmoid, saves={})})
    text = "import torch\ny = torch.sigmoid(x)\n"
    found = hover_at(text, 1, text.splitlines()[1].index("sigmoid"), facts=changed)
    assert found is not None
    assert "**Backward keeps** none of its operands, nor its result." in found.markdown
