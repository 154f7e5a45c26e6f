"""Custom ``torch.autograd.Function``s (issue 28): ``Fn.apply`` runs ``forward`` with grad
off on a ``ctx``; what ``ctx.save_for_backward`` keeps is saved for ``Fn``'s backward (a
later in-place write breaks it, GG001), an output that is an input returned as it was or
a view made in forward may not be written in place (GG003), and an input marked with
``ctx.mark_dirty`` was written in place by the Function itself.

Specifications of the analysis only; a write that ``backward`` itself makes is not yet
followed (issue 28).
"""

from __future__ import annotations

from tests.rulecases import Case, case

INVALID: list[Case] = [
    case("GG001: the caller writes an output forward saved for backward", """
        import torch

        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad):
                (y,) = ctx.saved_tensors
                return grad * 2

        x = torch.randn(3, requires_grad=True)
        y = Scale.apply(x)
        y += 1  # expect: GG001
        y.sum().backward()
    """),
    case("GG003: the caller writes an input forward returned as it was", """
        import torch

        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        x = torch.randn(3, requires_grad=True)
        y = Double.apply(x * 1)
        y *= 3  # expect: GG003
        y.sum().backward()
    """),
    case("GG003: the caller writes a view forward made and returned", """
        import torch

        class Transposed(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone().t()

            @staticmethod
            def backward(ctx, grad):
                return grad.t()

        x = torch.randn(2, 3, requires_grad=True)
        y = Transposed.apply(x)
        y += 1  # expect: GG003
        y.sum().backward()
    """),
]

VALID: list[Case] = [
    case("GG001: the saved output is written out of place", """
        import torch

        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad):
                (y,) = ctx.saved_tensors
                return grad * 2

        x = torch.randn(3, requires_grad=True)
        y = Scale.apply(x)
        y = y + 1
        y.sum().backward()
    """),
    case("GG003: an input written in forward and marked dirty may be written again", """
        import torch

        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        x = torch.randn(3, requires_grad=True)
        y = Double.apply(x * 1)
        y *= 3
        y.sum().backward()
    """),
]

