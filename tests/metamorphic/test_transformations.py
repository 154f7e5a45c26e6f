"""Each transformation on a tiny program: the text it makes (before -> after), that what
it makes is valid Python, that a program without its shape is left alone, and that torch
runs before and after alike (the same in-place error, the same values at each backward).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
import pytest

from tests.metamorphic import BY_NAME, TRANSFORMATIONS
from tests.metamorphic.base import Transformation
from tests.metamorphic.judge import run_programs
from tests.metamorphic.programs import Program
from tests.metamorphic.variants import Variant

OPS = '''\
import torch
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
y.mul_(2)  # expect: GG001
y.sum().backward()
'''
AUG = '''\
import torch
x = torch.randn(4, requires_grad=True)
y = x.exp()
y += 1  # expect: GG001
y.sum().backward()
'''
LAYER = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        y = self.act(y)
        return y


Net()(torch.randn(4, requires_grad=True)).sum().backward()
'''
TRAIN = '''\
import torch

w = torch.randn(4, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
loss = (w * 2).sum()
loss.backward()
opt.step()
'''


@dataclass(frozen=True)
class Example:
    transformation: str
    before: str
    after: str  # the entry script, case.py
    other_files: dict[str, str] = field(default_factory=dict)


EXAMPLES = [
    Example("helper_function", AUG, """\
import torch
def _mm_inplace_helper1(y):
    y += 1  # expect: GG001
    return y
x = torch.randn(4, requires_grad=True)
y = x.exp()
y = _mm_inplace_helper1(y)  # expect: GG001
y.sum().backward()
"""),
    Example("nested_function", AUG, """\
import torch
x = torch.randn(4, requires_grad=True)
y = x.exp()
def _mm_inplace_inner1(y):
    y += 1  # expect: GG001
    return y
y = _mm_inplace_inner1(y)  # expect: GG001
y.sum().backward()
"""),
    Example("lambda_call", OPS, """\
import torch
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
(lambda tensor, *args, **kwargs: tensor.mul_(*args, **kwargs))(y, 2)  # expect: GG001
y.sum().backward()
"""),
    Example("staticmethod_args", OPS, """\
import torch
class _mm_InplaceOps:
    @staticmethod
    def mul_(*args, **kwargs):
        tensor, *rest = args
        return tensor.mul_(*rest, **kwargs)  # expect: GG001
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
_mm_InplaceOps.mul_(y, 2)  # expect: GG001
y.sum().backward()
"""),
    Example("classmethod_kwargs", OPS, """\
import torch
class _mm_InplaceApply:
    @classmethod
    def mul_(cls, *args, **kwargs):
        tensor = args[0]
        return getattr(tensor, 'mul_')(*args[1:], **kwargs)  # expect: GG001
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
_mm_InplaceApply.mul_(y, 2)  # expect: GG001
y.sum().backward()
"""),
    Example("functools_partial", OPS, """\
import torch
import functools as _mm_functools
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
_mm_functools.partial(y.mul_)(2)  # expect: GG001
y.sum().backward()
"""),
    Example("map_call", OPS, """\
import torch
x = torch.randn(4, requires_grad=True)
y = list(map(torch.sigmoid, [x]))[0]
y.mul_(2)  # expect: GG001
y.sum().backward()
"""),
    Example("zip_loop", OPS, """\
import torch
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
for _mm_zipped1, _mm_index in zip([y], [None]):
    _mm_zipped1.mul_(2)  # expect: GG001
y.sum().backward()
"""),
    Example("comprehension", OPS, """\
import torch
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
[_mm_item.mul_(2) for _mm_item in [y]]  # expect: GG001
y.sum().backward()
"""),
    Example("generator", OPS, """\
import torch
x = next(torch.randn(4, requires_grad=True) for _mm_once in [None])
y = next(torch.sigmoid(x) for _mm_once in [None])
y.mul_(2)  # expect: GG001
y.sum().backward()
"""),
    Example("tuple_unpacking", OPS, """\
import torch
(x, _mm_unused) = (torch.randn(4, requires_grad=True), None)
(y, _mm_unused) = (torch.sigmoid(x), None)
y.mul_(2)  # expect: GG001
y.sum().backward()
"""),
    Example("star_args", OPS, """\
import torch
x = torch.randn(*[4, ], requires_grad=True)
y = torch.sigmoid(*[x])
y.mul_(*[2])  # expect: GG001
y.sum().backward()
"""),
    Example("dict_value", OPS, """\
import torch
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
_mm_values1 = {'tensor': y}
_mm_values1['tensor'].mul_(2)  # expect: GG001
y.sum().backward()
"""),
    Example("list_slot", OPS, """\
import torch
_mm_slots1 = [None]
_mm_slots1[0] = torch.randn(4, requires_grad=True)
x = _mm_slots1[0]
_mm_slots2 = [None]
_mm_slots2[0] = torch.sigmoid(x)
y = _mm_slots2[0]
y.mul_(2)  # expect: GG001
y.sum().backward()
"""),
    Example("attribute_of_object", OPS, """\
import torch
class _mm_Holder:
    pass
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
_mm_holder1 = _mm_Holder()
_mm_holder1.tensor = y
_mm_holder1.tensor.mul_(2)  # expect: GG001
y.sum().backward()
"""),
    Example("alias_variable", AUG, """\
import torch
x = torch.randn(4, requires_grad=True)
y = x.exp()
_mm_alias1 = y
_mm_alias1 += 1  # expect: GG001
y = _mm_alias1
y.sum().backward()
"""),
    Example("return_rebind", OPS, """\
import torch
def _mm_passed(value):
    return value
x = _mm_passed(torch.randn(4, requires_grad=True))
y = _mm_passed(torch.sigmoid(x))
y.mul_(2)  # expect: GG001
y.sum().backward()
"""),
    Example("constructor_flag", LAYER, """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, *, _mm_flag=True):
        super().__init__()
        self.act = (nn.ReLU(inplace=True) if _mm_flag else nn.Identity())  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        y = self.act(y)
        return y


Net()(torch.randn(4, requires_grad=True)).sum().backward()
"""),
    Example("config_dataclass", LAYER, """\
import torch
import torch.nn as nn
import dataclasses as _mm_dataclasses

@_mm_dataclasses.dataclass
class _MMConfig:
    ReLU: type = nn.ReLU

_MM_CONFIG = _MMConfig()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = _MM_CONFIG.ReLU(inplace=True)  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        y = self.act(y)
        return y


Net()(torch.randn(4, requires_grad=True)).sum().backward()
"""),
    Example("config_namespace", LAYER, """\
import torch
import torch.nn as nn
import types as _mm_types
_MM_CONFIG = _mm_types.SimpleNamespace(ReLU=nn.ReLU)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = _MM_CONFIG.ReLU(inplace=True)  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        y = self.act(y)
        return y


Net()(torch.randn(4, requires_grad=True)).sum().backward()
"""),
    Example("config_dict", LAYER, """\
import torch
import torch.nn as nn
_MM_CFG = {
    'ReLU_1': {'inplace': True},
}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(**_MM_CFG['ReLU_1'])  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        y = self.act(y)
        return y


Net()(torch.randn(4, requires_grad=True)).sum().backward()
"""),
    Example("stored_partial", LAYER, """\
import torch
import torch.nn as nn
import functools as _mm_functools
_MM_ReLU_1 = _mm_functools.partial(nn.ReLU, inplace=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = _MM_ReLU_1()  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        y = self.act(y)
        return y


Net()(torch.randn(4, requires_grad=True)).sum().backward()
"""),
    Example("getattr_nn", LAYER, """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = getattr(nn, 'ReLU')(inplace=True)  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        y = self.act(y)
        return y


Net()(torch.randn(4, requires_grad=True)).sum().backward()
"""),
    Example("registry_dict", LAYER, """\
import torch
import torch.nn as nn
_MM_LAYERS = {'ReLU': nn.ReLU}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = _MM_LAYERS['ReLU'](inplace=True)  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        y = self.act(y)
        return y


Net()(torch.randn(4, requires_grad=True)).sum().backward()
"""),
    Example("default_argument", LAYER, """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, *, _mm_layer1=nn.ReLU):
        super().__init__()
        self.act = _mm_layer1(inplace=True)  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        y = self.act(y)
        return y


Net()(torch.randn(4, requires_grad=True)).sum().backward()
"""),
    Example("sequential_wrap", LAYER, """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Sequential(nn.ReLU(inplace=True))  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        y = self.act(y)
        return y


Net()(torch.randn(4, requires_grad=True)).sum().backward()
"""),
    Example("modulelist_loop", LAYER, """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ModuleList([nn.ReLU(inplace=True)])  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        for _mm_key in range(len(self.act)):
            y = self.act[_mm_key](y)
        return y


Net()(torch.randn(4, requires_grad=True)).sum().backward()
"""),
    Example("moduledict_loop", LAYER, """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ModuleDict({'layer': nn.ReLU(inplace=True)})  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        for _mm_key in self.act:
            y = self.act[_mm_key](y)
        return y


Net()(torch.randn(4, requires_grad=True)).sum().backward()
"""),
    Example("super_forward", LAYER, """\
import torch
import torch.nn as nn


class _mm_BaseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        y = self.act(y)
        return y
class Net(_mm_BaseNet):
    def forward(self, *args, **kwargs):
        return super().forward(*args, **kwargs)


Net()(torch.randn(4, requires_grad=True)).sum().backward()
"""),
    Example("forward_hook", LAYER, """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self._mm_inner_act = nn.ReLU(inplace=True)  # expect: GG001
        self.act = nn.Identity()
        self.act.register_forward_hook(
            lambda module, args, output, inner=self._mm_inner_act: inner(output))

    def forward(self, x):
        y = torch.sigmoid(x)
        y = self.act(y)
        return y


Net()(torch.randn(4, requires_grad=True)).sum().backward()
"""),
    Example("property_layer", LAYER, """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self._mm_act = nn.ReLU(inplace=True)  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        y = self.act(y)
        return y
    @property
    def act(self):
        return self._mm_act


Net()(torch.randn(4, requires_grad=True)).sum().backward()
"""),
    Example("split_module", LAYER, """\
import torch
import torch.nn as nn
from _mm_model import Net


Net()(torch.randn(4, requires_grad=True)).sum().backward()
""", {"_mm_model.py": """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)  # expect: GG001

    def forward(self, x):
        y = torch.sigmoid(x)
        y = self.act(y)
        return y
"""}),
    Example("train_function", OPS, """\
import torch
def _mm_train_step():
    global x, y
    x = torch.randn(4, requires_grad=True)
    y = torch.sigmoid(x)
    y.mul_(2)  # expect: GG001
    y.sum().backward()
_mm_train_step()
"""),
    Example("trainer_method", OPS, """\
import torch
class _mm_Trainer:
    def step(self):
        global x, y
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        y.mul_(2)  # expect: GG001
        y.sum().backward()
_mm_Trainer().step()
"""),
    Example("retain_graph_loop", OPS, """\
import torch
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
y.mul_(2)  # expect: GG001
for _mm_pass in [None]:
    y.sum().backward(retain_graph=True)
"""),
    Example("epoch_scheduler", TRAIN, """\
import torch

w = torch.randn(4, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
_mm_scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=1.0)
for _mm_epoch in [0]:
    loss = (w * 2).sum()
    loss.backward()
    opt.step()
    _mm_scheduler.step()
"""),
]


def transformed(example: Example) -> dict[str, str] | None:
    program = Program("case.py", {"case.py": cst.parse_module(example.before)})
    result = BY_NAME[example.transformation].apply(program)
    return None if result is None else result.texts


def test_every_transformation_has_an_example_and_says_what_it_rewrites() -> None:
    assert len(TRANSFORMATIONS) >= 20
    assert sorted(e.transformation for e in EXAMPLES) == sorted(BY_NAME)
    for transformation in TRANSFORMATIONS:
        assert len(transformation.doc) > 40, transformation.name


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.transformation)
def test_rewrites_the_example(example: Example) -> None:
    texts = transformed(example)
    assert texts == {"case.py": example.after, **example.other_files}
    for name, text in texts.items():
        compile(text, name, "exec")


@pytest.mark.parametrize("transformation", TRANSFORMATIONS, ids=lambda t: t.name)
def test_leaves_a_program_without_its_shape_alone(transformation: Transformation) -> None:
    program = Program("case.py", {"case.py": cst.parse_module("total = 1 + 2\n")})
    assert transformation.apply(program) is None


def test_torch_runs_each_example_as_it_runs_the_original() -> None:
    pytest.importorskip("torch")
    programs = []
    for example in EXAMPLES:
        original = Variant("before", "original", "case.py", {"case.py": example.before})
        changed = Variant("after", example.transformation, "case.py",
                          {"case.py": example.after, **example.other_files})
        programs += [(f"before {example.transformation}", original, False),
                     (f"after {example.transformation}", changed, False)]
    runs = run_programs(programs)
    for example in EXAMPLES:
        name = example.transformation
        before, after = runs[f"before {name}"], runs[f"after {name}"]
        assert after == before, name
        assert before.values, f"{name}: no backward ran"
