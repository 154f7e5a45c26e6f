"""Which methods of a class interpretation runs: those that can meet an in-place write,
an optimizer step or a backward, through what they call; a class none of whose methods
can is neither run nor built."""

from __future__ import annotations

from gradguard.analysis.analyze import program_of
from gradguard.analysis.prefilter import candidate_methods, candidate_roots

HEADER = '''import torch
import torch.nn as nn
'''


def _methods(body: str) -> dict[str, set[str]]:
    source = HEADER + body
    found = candidate_roots(source)
    return candidate_methods(source, program_of("m.py", source), found)


def test_a_method_with_a_write_of_its_own_is_run_and_its_siblings_are_not() -> None:
    chosen = _methods('''
class Net(nn.Module):
    def forward(self, x):
        y = torch.sigmoid(x)
        y.mul_(2)
        return y

    def describe(self):
        return "net"
''')
    assert chosen == {"Net": {"forward"}}


def test_a_method_that_calls_a_writing_method_of_its_class_is_run() -> None:
    chosen = _methods('''
class Net(nn.Module):
    def scale(self, y):
        y.mul_(2)
        return y

    def forward(self, x):
        return self.scale(torch.sigmoid(x))
''')
    assert chosen == {"Net": {"scale", "forward"}}


def test_a_method_that_calls_an_in_place_layer_built_in_init_is_run() -> None:
    chosen = _methods('''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(torch.sigmoid(x))
''')
    assert chosen == {"Net": {"forward"}}


def test_a_method_that_calls_layers_which_write_nothing_is_not_run() -> None:
    chosen = _methods('''
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(torch.sigmoid(x))


class Quiet(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(torch.sigmoid(x))

    def grow(self, x):
        x += 1
        return x
''')
    # Quiet is kept for grow alone: its forward runs only a ReLU that is not in place.
    assert chosen == {"Block": {"forward"}, "Quiet": {"grow"}}


def test_a_method_that_uses_a_class_whose_methods_write_is_run() -> None:
    chosen = _methods('''
class Block(nn.Module):
    def forward(self, x):
        x.add_(1)
        return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return self.block(torch.sigmoid(x))

    def name(self):
        return "net"
''')
    assert chosen == {"Block": {"forward"}, "Net": {"forward"}}


def test_a_class_named_only_in_an_annotation_or_a_docstring_runs_nothing() -> None:
    chosen = _methods('''
class Block(nn.Module):
    def forward(self, x):
        x.add_(1)
        return x


class Net(nn.Module):
    def forward(self, x: Block) -> Block:
        """Not a Block itself."""
        return torch.sigmoid(x)

    def grow(self, x: torch.Tensor):
        x += 1
        return x
''')
    assert chosen == {"Block": {"forward"}, "Net": {"grow"}}


def test_a_class_whose_construction_writes_keeps_every_method() -> None:
    chosen = _methods('''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))
        self.w.mul_(2)

    def forward(self, x):
        return x * self.w

    def name(self):
        return "net"
''')
    assert chosen == {"Net": {"forward", "name"}}


def test_methods_are_read_at_the_lines_the_parser_gives_them_past_a_page_break() -> None:
    # A form feed ends a line for str.splitlines, not for Python's parser.
    chosen = _methods('''
\x0c
class Net(nn.Module):
    def forward(self, x):
        y = torch.sigmoid(x)
        y.mul_(2)
    def describe(self):
        return "net"
''')
    assert chosen == {"Net": {"forward"}}
