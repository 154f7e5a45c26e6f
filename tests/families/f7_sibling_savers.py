"""Family 7 of issue 16: a block's input saved by one child (a shortcut conv, a branch)
and overwritten in place by another child (a pre-activation ``ReLU(inplace=True)``, a
``+=``), or one tensor fed to two modules where the second one's in-place write breaks
what the first saved.

The smallest real code that triggers it (INVALID, marked ``# expect: GG001``) and the
closest code that must not (VALID); tests/test_families.py runs each statically and under
torch. Cases GradGuard does not get right yet are ``missed`` (a strict xfail).
"""

from tests.rulecases import case

FAMILY = "7"

INVALID = [
    case("F7: the shortcut conv saves the block input, the residual branch's leading "
         "in-place ReLU overwrites it (pytorch#15428)", """
        import torch
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.shortcut = nn.Conv2d(2, 4, 1)
                self.residual = nn.Sequential(
                    nn.ReLU(inplace=True),  # expect: GG001
                    nn.Conv2d(2, 4, 3, padding=1),
                )

            def forward(self, x):
                sc = self.shortcut(x)
                return self.residual(x) + sc

        x = torch.randn(1, 2, 4, 4, requires_grad=True) * 1
        Block()(x).sum().backward()
    """),
    case("F7: a side branch's conv saves x, the main branch adds into x in place "
         "(branch_conv_then_iadd)", """
        import torch
        import torch.nn as nn
        conv1 = nn.Conv2d(2, 2, 1)
        conv1_p = nn.Conv2d(2, 2, 1)
        inp = torch.randn(1, 2, 4, 4)
        x = conv1(inp)
        x_p = conv1_p(x)
        x += inp  # expect: GG001
        (x.sum() + x_p.sum()).backward()
    """),
]

VALID = [
    case("F7: the residual branch first, its in-place ReLU before the shortcut takes x", """
        import torch
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.shortcut = nn.Conv2d(2, 4, 1)
                self.residual = nn.Sequential(
                    nn.ReLU(inplace=True),
                    nn.Conv2d(2, 4, 3, padding=1),
                )

            def forward(self, x):
                resd = self.residual(x)
                return resd + self.shortcut(x)

        x = torch.randn(1, 2, 4, 4, requires_grad=True) * 1
        Block()(x).sum().backward()
    """),
    case("F7: the main branch adds out of place", """
        import torch
        import torch.nn as nn
        conv1 = nn.Conv2d(2, 2, 1)
        conv1_p = nn.Conv2d(2, 2, 1)
        inp = torch.randn(1, 2, 4, 4)
        x = conv1(inp)
        x_p = conv1_p(x)
        x = x + inp
        (x.sum() + x_p.sum()).backward()
    """),
]
