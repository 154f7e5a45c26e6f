"""Family 9 of issue 16: a write through ``.data`` into a tensor that backward saved. No
error is raised; the gradients come out wrong. Reported as a warning (static analysis
cannot measure the damage; the probe can).

The smallest real code that triggers it (INVALID, marked ``# expect: GG005``) and the
closest code that must not (VALID); tests/test_families.py runs each statically and under
torch, where a silent case is judged by reading ``.data`` as ``.detach()`` (which shares
the version counter): the marked write must then raise autograd's in-place error, and a
valid case must still run. Cases GradGuard does not get right yet are ``missed``.
"""

from tests.rulecases import case

FAMILY = "9"

INVALID = [
    case("F9: zeroing a sigmoid's output through .data (pytorch#6990)", """
        import torch
        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = a.sigmoid()
        c = out.data
        c.zero_()  # expect: GG005
        out.sum().backward()
    """, severity="warning", silent=True),
    case("F9: pow's input scaled through .data before backward (d2l #126)", """
        import torch
        x = torch.ones(1, requires_grad=True)
        y = x ** 2
        x.data *= 100  # expect: GG005
        y.backward()
    """, severity="warning", silent=True),
    case("F9: a Tanh generator's output rescaled through .data (GAP normalize_and_scale)", """
        import torch
        import torch.nn as nn
        netG = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
        delta_im = netG(torch.randn(2, 3))
        delta_im.data += 1  # expect: GG005
        delta_im.sum().backward()
    """, severity="warning", silent=True),
]

VALID = [
    case("F9: a .data write before the forward uses the tensor", """
        import torch
        x = torch.ones(1, requires_grad=True)
        x.data *= 100
        y = x ** 2
        y.backward()
    """, silent=True),
    case("F9: a .data write into an output no op saved (an addition's)", """
        import torch
        import torch.nn as nn
        netG = nn.Linear(3, 3)
        delta_im = netG(torch.randn(2, 3)) + 0
        delta_im.data += 1
        delta_im.sum().backward()
    """, silent=True),
]
