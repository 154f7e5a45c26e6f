"""GG005: a write through ``.data`` into a tensor that an earlier op saved for backward.

``x.data`` is the same storage under a version counter of its own, so autograd's check
never sees the write: backward raises nothing and computes its gradients from the new
values. The smallest real code that triggers it (INVALID, the lines marked
``# expect: GG005``) and the closest code that must not (VALID), as in
docs/rules/GG005.md. Torch raises nothing for either: tests/test_rule_cases_under_torch.py
checks that each INVALID case runs, and that the same code writing through
``.detach()`` (the same storage, autograd's own version counter) is refused.
"""

from tests.rulecases import case

RULE = "GG005"

INVALID = [
    case("GG005: the output of sigmoid zeroed through .data before backward", """
        import torch

        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = a.sigmoid()
        out.data.zero_()  # expect: GG005
        out.sum().backward()
    """, severity="warning"),
    case("GG005: an alias of .data written by index", """
        import torch

        a = torch.randn(3, requires_grad=True)
        out = a.exp()
        values = out.data
        values[0] = 5.0  # expect: GG005
        out.sum().backward()
    """, severity="warning"),
    case("GG005: a module rescales its saved activation through .data", """
        import torch
        import torch.nn as nn

        class Squash(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)

            def forward(self, x):
                y = torch.sigmoid(self.fc(x))
                y.data.mul_(0.5)  # expect: GG005
                return y

        Squash()(torch.randn(2, 3)).sum().backward()
    """, severity="warning"),
]

VALID = [
    case("GG005: a manual SGD step through .data after backward", """
        import torch

        w = torch.randn(3, requires_grad=True)
        loss = (w.sigmoid() * torch.randn(3)).sum()
        loss.backward()
        w.data -= 0.1 * w.grad
    """),
    case("GG005: a write through .data into a tensor no op saved", """
        import torch

        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = a + 1
        out.data.zero_()
        out.sum().backward()
    """),
    case("GG005: the saved output copied before the write", """
        import torch

        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = a.sigmoid()
        c = out.detach().clone()
        c.zero_()
        out.sum().backward()
    """),
]
