"""Code written one step differently, found as the code it stands for: a lambda over the
layer it closes over, a staticmethod or classmethod called on its class, a property that
returns a layer, ``functools.partial`` of an in-place method or a layer class (kept in a
variable, as timm's ``act_layer``), a dataclass config, ``nn.ModuleDict`` looked up by
key, ``eval()`` reaching a model's blocks, numbers known on both sides of a comparison
(``i < num_layers - 1``), a class root's later method on a weight that may be a lazy
parameter, and a layer a base class builds in the ``__init__`` a subclass reaches
through ``super()``.

These are specifications of the analysis only. They are not rule cases, whose files also
drive the fixes and the probe: ``check`` finds these hazards but has no fix for a write
inside a staticmethod, classmethod or partial yet, and the probe's report of a lambda's
or property's lines differs from the marks, and its automatic form cannot build a base
class whose ``__init__`` needs arguments (noted for issue 28).
"""

from __future__ import annotations

from tests.rulecases import Case, case

INVALID: list[Case] = [
    case("GG001: a lambda reads the layer it closes over", """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.Sigmoid()

            def forward(self, x):
                gate = lambda t: self.act(t)  # noqa: E731
                y = gate(x * 2)
                y.mul_(2)  # expect: GG001
                return y

        Net()(torch.randn(2, 4, requires_grad=True)).sum().backward()
    """),
    case("GG001: a staticmethod called on its class writes its argument", """
        import torch

        class Ops:
            @staticmethod
            def scale_(*args):
                tensor, *rest = args
                return tensor.mul_(*rest)  # expect: GG001

        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        Ops.scale_(y, 2)
        y.sum().backward()
    """),
    case("GG001: a classmethod gets its class first, then the tensor it writes", """
        import torch

        class Ops:
            @classmethod
            def scale_(cls, tensor, factor):
                return getattr(tensor, "mul_")(factor)  # expect: GG001

        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        Ops.scale_(y, 2)
        y.sum().backward()
    """),
    case("GG001: a layer returned by a property and called", """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self._act = nn.Sigmoid()

            @property
            def act(self):
                return self._act

            def forward(self, x):
                y = self.act(x * 2)
                y.mul_(2)  # expect: GG001
                return y

        Net()(torch.randn(4, requires_grad=True)).sum().backward()
    """),
    case("GG001: functools.partial of an in-place method, called", """
        import functools
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        functools.partial(y.mul_)(2)  # expect: GG001
        y.sum().backward()
    """),
    case("GG001: a layer the base's __init__ builds, reached through super().__init__", """
        import torch
        import torch.nn as nn

        class Base(nn.Module):
            def __init__(self, inplace):
                super().__init__()
                self.act = nn.ReLU(inplace=inplace)

        class Block(Base):
            def __init__(self):
                super().__init__(inplace=True)
                self.gate = nn.Sigmoid()

            def forward(self, x):
                return self.act(self.gate(x))  # expect: GG001

        Block()(torch.randn(4, requires_grad=True)).sum().backward()
    """),
    case("GG001: a layer class bound with its inplace flag by functools.partial", """
        import functools
        import torch
        import torch.nn as nn

        act_layer = functools.partial(nn.ReLU, inplace=True)

        class Block(nn.Module):
            def __init__(self, act=act_layer):
                super().__init__()
                self.gate = nn.Sigmoid()
                self.act = act()

            def forward(self, x):
                return self.act(self.gate(x))  # expect: GG001

        Block()(torch.randn(4, requires_grad=True)).sum().backward()
    """),
    case("GG001: a stored partial of a project function that writes its argument", """
        from functools import partial
        import torch

        def scale_(t, factor):
            return t.mul_(factor)  # expect: GG001

        double_ = partial(scale_, factor=2)
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        double_(y)
        y.sum().backward()
    """),
    case("GG001: an in-place layer of a ModuleDict, called by a loop over its keys", """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.acts = nn.ModuleDict({"relu": nn.ReLU(inplace=True)})

            def forward(self, x):
                y = torch.sigmoid(x)
                for key in self.acts:
                    y = self.acts[key](y)  # expect: GG001
                return y

        Net()(torch.randn(4, requires_grad=True)).sum().backward()
    """),
    case("GG001: a ModuleDict built empty, filled by key, run through items()", """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.acts = nn.ModuleDict()
                self.acts["relu"] = nn.ReLU(inplace=True)

            def forward(self, x):
                y = torch.sigmoid(x)
                for name, act in self.acts.items():
                    y = act(y)  # expect: GG001
                return y

        Net()(torch.randn(4, requires_grad=True)).sum().backward()
    """),
    case("GG001: eval() on a model puts its blocks in eval mode, where one writes a save", """
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def forward(self, x):
                if not self.training:
                    y = x.sigmoid()
                    y[..., 0:2] = y[..., 0:2] * 2  # expect: GG001
                    return y
                return x

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = Head()

            def forward(self, x):
                return self.head(x)

        model = Net().eval()
        model(torch.randn(2, 4, requires_grad=True)).sum().backward()
    """),
    case("GG001: a module called with a keyword that picks the branch of its forward", """
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def forward(self, x, squash=False):
                if squash:
                    y = x.sigmoid()
                    y.mul_(2)  # expect: GG001
                    return y
                return x

        Head()(torch.randn(4, requires_grad=True), squash=True).sum().backward()
    """),
    case("GG001: isinstance over an unpacked list picks the in-place layers", """
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU(),
                                          nn.Dropout(0.1),  # expect: GG001
                                          nn.Linear(4, 1))
                for m in self.modules():
                    if isinstance(*[m, (nn.ReLU, nn.Dropout)]):
                        m.inplace = True

            def forward(self, x):
                return self.body(x)

        Head()(torch.randn(2, 4)).sum().backward()
    """),
    case("GG004: a helper taking *args freezes nothing, then a step between backwards", """
        import torch
        import torch.nn as nn

        def set_grad(*args):
            tensor, *rest = args
            return tensor.requires_grad_(*rest)

        backbone = nn.Linear(4, 2)
        set_grad(backbone.weight, True)
        set_grad(backbone.bias, True)
        opt = torch.optim.SGD(backbone.parameters(), lr=0.1)
        out = backbone(torch.randn(3, 4, requires_grad=True))
        out.pow(2).sum().backward(retain_graph=True)
        opt.step()  # expect: GG004
        out.sum().backward()
    """),
]

VALID: list[Case] = [
    case("GG001: a lambda that clones before the write keeps the saved output", """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.Sigmoid()

            def forward(self, x):
                gate = lambda t: self.act(t).clone()  # noqa: E731
                y = gate(x * 2)
                y.mul_(2)
                return y

        Net()(torch.randn(2, 4, requires_grad=True)).sum().backward()
    """),
    case("GG001: the dataclass config's default replaced by a layer that keeps nothing", """
        import dataclasses
        import torch
        import torch.nn as nn

        @dataclasses.dataclass
        class Config:
            act: type = nn.Sigmoid

        act = Config(act=nn.Identity).act()
        x = torch.randn(4, requires_grad=True)
        y = act(x * 2)
        y.mul_(2)
        y.sum().backward()
    """),
    case("GG005: a method run on its own after forward does not see forward's saves, "
         "also on a weight that may be an unknown lazy parameter", """
        import torch
        import torch.nn as nn

        class TypedLinear(nn.Module):
            def __init__(self, in_features, num_types):
                super().__init__()
                if in_features == -1:
                    self.weight = nn.parameter.UninitializedParameter()
                else:
                    self.weight = nn.Parameter(torch.randn(num_types, in_features, 3))

            def forward(self, x, type_ptr):
                out = x.new_empty(x.size(0), 3)
                for i, (start, end) in enumerate(zip(type_ptr[:-1], type_ptr[1:])):
                    out[start:end] = x[start:end] @ self.weight[i]
                return out

            def reset_parameters(self):
                nn.init.uniform_(self.weight.data, -1, 1)

        TypedLinear(4, 2)(torch.randn(4, 4), torch.tensor([0, 2, 4])).sum().backward()
    """),
    case("GG001: the base's __init__ given inplace=False through super()", """
        import torch
        import torch.nn as nn

        class Base(nn.Module):
            def __init__(self, inplace):
                super().__init__()
                self.act = nn.ReLU(inplace=inplace)

        class Block(Base):
            def __init__(self):
                super().__init__(inplace=False)
                self.gate = nn.Sigmoid()

            def forward(self, x):
                return self.act(self.gate(x))

        Block()(torch.randn(4, requires_grad=True)).sum().backward()
    """),
    case("GG001: a stored partial of an in-place layer after an op that saves nothing", """
        from functools import partial
        import torch
        import torch.nn as nn

        act_layer = partial(nn.ReLU, inplace=True)
        x = torch.randn(4, requires_grad=True)
        y = x + 1
        act_layer()(y)
        y.sum().backward()
    """),
    case("GG001: a stored partial that turns the inplace flag off", """
        from functools import partial
        import torch
        import torch.nn as nn

        act_layer = partial(nn.ReLU, inplace=False)
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        act_layer()(y)
        y.sum().backward()
    """),
    case("GG001: a ModuleDict whose in-place layer follows an op that saves nothing", """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.acts = nn.ModuleDict({"relu": nn.ReLU(inplace=True), "gelu": nn.GELU()})

            def forward(self, x):
                y = x * 2
                for key in self.acts:
                    y = self.acts[key](y)
                return y

        Net()(torch.randn(4, requires_grad=True)).sum().backward()
    """),
    case("GG001: the eval-only write is not reached in training mode", """
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def forward(self, x):
                if not self.training:
                    y = x.sigmoid()
                    y[..., 0:2] = y[..., 0:2] * 2
                    return y
                return x

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = Head()

            def forward(self, x):
                return self.head(x)

        model = Net().train()
        model(torch.randn(2, 4, requires_grad=True)).sum().backward()
    """),
    case("GG001: a layer loop whose last layer is told apart by i < num_layers - 1", """
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self, dim, num_layers):
                super().__init__()
                self.num_layers = num_layers
                h = [dim] * (num_layers - 1)
                self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip([dim] + h, h + [4]))

            def forward(self, x):
                for i, layer in enumerate(self.layers):
                    x = nn.functional.relu(layer(x)) if i < self.num_layers - 1 else layer(x)
                return x

        boxes = Head(8, num_layers=3)(torch.randn(2, 8))
        boxes[..., :2] += 1
        boxes.sigmoid().sum().backward()
    """),
    case("a policy's actions drawn by sample(), which keeps no graph, after its step", """
        import torch
        import torch.nn as nn

        class Policy(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))

            def forward(self, obs, reparameterize=True):
                dist = torch.distributions.Normal(self.net(obs), 1.0)
                return dist.rsample() if reparameterize else dist.sample()

        policy, critic = Policy(), nn.Linear(4, 1)
        optimizer = torch.optim.Adam(policy.parameters())
        obs = torch.randn(3, 4)
        policy_loss = policy(obs).sum()
        critic_loss = critic(policy(obs, reparameterize=False)).sum()
        optimizer.zero_grad()
        policy_loss.backward()
        optimizer.step()
        critic_loss.backward()
    """),
    case("GG001: isinstance over an unpacked list leaves the dropout out", """
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU(),
                                          nn.Dropout(0.1),
                                          nn.Linear(4, 1))
                for m in self.modules():
                    if isinstance(*[m, nn.ReLU]):
                        m.inplace = True

            def forward(self, x):
                return self.body(x)

        Head()(torch.randn(2, 4)).sum().backward()
    """),
    case("GG004: a helper taking *args freezes the parameters a step between backwards skips", """
        import torch
        import torch.nn as nn

        def set_grad(*args):
            tensor, *rest = args
            return tensor.requires_grad_(*rest)

        backbone = nn.Linear(4, 2)
        set_grad(backbone.weight, False)
        set_grad(backbone.bias, False)
        opt = torch.optim.SGD(backbone.parameters(), lr=0.1)
        out = backbone(torch.randn(3, 4, requires_grad=True))
        out.pow(2).sum().backward(retain_graph=True)
        opt.step()
        out.sum().backward()
    """),
]
