"""GG002: an in-place write to a leaf tensor that requires grad, outside no_grad.

The smallest real code that triggers it (INVALID, the lines marked ``# expect: GG002``)
and the closest code that must not (VALID), as in docs/rules/GG002.md. Every case
is a runnable script: tests/test_rule_cases_under_torch.py checks each label under torch.
"""

from tests.rulecases import case

RULE = "GG002"

INVALID = [
    case("GG002: in-place add on a tensor made with requires_grad=True", """
        import torch
        w = torch.randn(3, requires_grad=True)
        w += 1  # expect: GG002
        w.sum().backward()
    """),
    case("GG002: a parameter written in place in forward", """
        import torch
        import torch.nn as nn

        class Scale(nn.Module):
            def __init__(self):
                super().__init__()
                self.gain = nn.Parameter(torch.ones(4))

            def forward(self, x):
                self.gain.clamp_(0, 1)  # expect: GG002
                return x * self.gain

        Scale()(torch.randn(2, 4)).sum().backward()
    """),
    case("GG002: requires_grad_() makes a leaf that a later += writes", """
        import torch
        w = torch.randn(4, 4, requires_grad=True)
        h = torch.randn(2, 4)
        h.requires_grad_()
        out = h @ w
        h += 1  # expect: GG002
        out.sum().backward()
    """),
    case("GG002: the weight of a subclass of nn.Conv2d set by an index write", """
        import torch
        import torch.nn as nn

        class CatConv2d(nn.Conv2d):
            def forward(self, xs):
                return super().forward(torch.cat(xs, 1))

        conv = CatConv2d(4, 2, 3)
        conv.weight[:, :, :, :] = torch.ones(2, 4, 3, 3)  # expect: GG002
        conv([torch.randn(1, 2, 5, 5), torch.randn(1, 2, 5, 5)]).sum().backward()
    """),
    case("GG002: a weight copied into after its requires_grad was switched back on", """
        import torch
        import torch.nn as nn

        layer = nn.Linear(4, 2)
        layer.weight.requires_grad = False
        layer.weight.requires_grad = True
        layer.weight.copy_(torch.ones(2, 4))  # expect: GG002
        layer(torch.randn(3, 4)).sum().backward()
    """),
    case("GG002: x[idx] += v with a tensor index stores back into the leaf", """
        import torch

        w = torch.zeros(3, requires_grad=True)
        idx = torch.tensor([0, 2])
        w[idx] += 1  # expect: GG002
        w.sum().backward()
    """),
    case("GG002: a helper updates the parameters of a model it reads as a global", """
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 3)

        def sgd_step(lr):
            for p in model.parameters():
                p.sub_(lr * p.grad)  # expect: GG002

        model(torch.randn(2, 3)).sum().backward()
        sgd_step(0.1)
    """),
    case("GG002: a forward hook makes a frozen embedding's output a leaf that requires grad",
         """
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(10, 4)
                self.embed.weight.requires_grad_(False)

                def make_inputs_require_grads(module, input, output):
                    output.requires_grad_(True)

                self.embed.register_forward_hook(make_inputs_require_grads)

            def forward(self, ids):
                x = self.embed(ids)
                x += 1  # expect: GG002
                return x.sum()

        Model()(torch.tensor([1, 2])).backward()
    """),
]

VALID = [
    case("GG002: a weight copied into while its requires_grad is off (transformers' "
         "prune_linear_layer)", """
        import torch
        import torch.nn as nn

        layer = nn.Linear(4, 2)
        layer.weight.requires_grad = False
        layer.weight.copy_(torch.ones(2, 4))
        layer.weight.requires_grad = True
        layer(torch.randn(3, 4)).sum().backward()
    """),
    case("GG002: leaf updated under no_grad", """
        import torch
        w = torch.randn(3, requires_grad=True)
        (w * 2).sum().backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
    """),
    case("GG002: parameter initialised in place through .data and nn.init", """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                nn.init.zeros_(self.fc.bias)
                self.fc.weight.data.normal_(0, 0.02)

            def forward(self, x):
                return self.fc(x)

        Net()(torch.randn(2, 4)).sum().backward()
    """),
    case("GG002: x[idx] += v with a tensor index, under no_grad", """
        import torch

        w = torch.zeros(3, requires_grad=True)
        idx = torch.tensor([0, 2])
        with torch.no_grad():
            w[idx] += 1
    """),
    case("GG002: a helper updates the parameters of a global model under no_grad", """
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 3)

        def sgd_step(lr):
            with torch.no_grad():
                for p in model.parameters():
                    p.sub_(lr * p.grad)

        model(torch.randn(2, 3)).sum().backward()
        sgd_step(0.1)
    """),
    case("GG002: the same forward hook on an embedding that is not frozen", """
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(10, 4)

                def make_inputs_require_grads(module, input, output):
                    output.requires_grad_(True)

                self.embed.register_forward_hook(make_inputs_require_grads)

            def forward(self, ids):
                x = self.embed(ids)
                x += 1
                return x.sum()

        Model()(torch.tensor([1, 2])).backward()
    """),
    case("GG002: a forward hook the analysis cannot follow replaces an identity's output", """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = nn.Linear(4, 4)
                self.proj = nn.Identity()
                self.proj.register_forward_hook(lambda module, args, out: self.inner(out))

            def forward(self, x):
                h = self.proj(x)  # the hook's Linear output, not the leaf x
                return h.mul_(2)

        Net()(torch.randn(4, requires_grad=True)).sum().backward()
    """),
]
