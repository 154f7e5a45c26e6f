"""Family 4 of issue 16: in-place writes into a tensor saved by an op whose saving rule
GradGuard did not know: ``x /= x.norm()``, ``torch.linalg.norm``, ``F.normalize``, the
values of ``topk``/``sort``/``max(dim)``, ``cumsum``/``cumprod``, ``pow``, ``tanh``, ``exp``.

The smallest real code that triggers it (INVALID, marked ``# expect: GG001``) and the
closest code that must not (VALID: the same ops, which do not save what is written);
tests/test_families.py runs each statically and under torch. Cases GradGuard does not get
right yet are ``missed`` (a strict xfail).
"""

from tests.rulecases import case

FAMILY = "4"

INVALID = [
    case("F4: x /= torch.linalg.norm(x) (owlvit class head)", """
        import torch
        x = torch.randn(3, 4, requires_grad=True) * 1
        x /= torch.linalg.norm(x, dim=-1, keepdim=True) + 1e-6  # expect: GG001
        x.sum().backward()
    """),
    case("F4: a norm's own result added into in place (cmd_norm_iadd)", """
        import torch
        a = torch.randn(4, requires_grad=True)
        b = torch.randn(4, requires_grad=True)
        cmd = (a - b).norm(p=2)
        cmd += (a * b).norm(p=2)  # expect: GG001
        cmd.backward()
    """),
    case("F4: tanh of the values of topk, written in place (the values themselves are "
         "free to write: topk saves only its indices)", """
        import torch
        x = torch.randn(6, requires_grad=True)
        values, indices = x.exp().topk(3)
        values.mul_(2)
        y = values.tanh()
        y.add_(1)  # expect: GG001
        y.sum().backward()
    """),
    case("F4: cumprod's output written in place", """
        import torch
        x = torch.rand(5, requires_grad=True)
        c = torch.cumprod(x, dim=0)
        c[0] = 1.0  # expect: GG001
        c.sum().backward()
    """),
    case("F4: pow's input written in place", """
        import torch
        x = torch.randn(4, requires_grad=True) * 1
        y = x.pow(3)
        x.add_(1)  # expect: GG001
        y.sum().backward()
    """),
]

VALID = [
    case("F4: the norm taken out of place", """
        import torch
        x = torch.randn(3, 4, requires_grad=True) * 1
        x = x / (torch.linalg.norm(x, dim=-1, keepdim=True) + 1e-6)
        x.sum().backward()
    """),
    case("F4: exp's input written in place (exp saves its output, not its input)", """
        import torch
        u = torch.randn(4, requires_grad=True) * 1
        uexp = u.exp()
        u[0] = 666.0
        uexp.sum().backward()
    """),
]
