"""Family 1 of issue 16: an in-place write on an output of a function that returns several
views (unbind, chunk, split, iteration over a tensor), which autograd refuses ("... is a
view and is being modified inplace. This view is the output of a function that returns
multiple views"), also when the write sits in a helper.

The smallest real code that triggers it (INVALID, marked ``# expect: GG003``) and the
closest code that must not (VALID); tests/test_families.py runs each statically and under
torch. Cases GradGuard does not get right yet are ``missed`` (a strict xfail).
"""

from tests.rulecases import case

FAMILY = "1"

INVALID = [
    case("F1: u, v = flow.chunk(2, dim=1), then u *= scale (flow_chunk_scale)", """
        import torch
        flow = torch.randn(1, 2, 4, 4, requires_grad=True) * 1
        u, v = flow.chunk(2, dim=1)
        u *= 2.0  # expect: GG003
        (u.sum() + v.sum()).backward()
    """),
    case("F1: rows of a tensor iterated and clamped in place (tensor_iter_clamp)", """
        import torch
        a = torch.rand(3, 4, 2, requires_grad=True)
        b = a * 1
        for bb in b:
            bb[:, 0].clamp_(min=0, max=0.3)  # expect: GG003
        b.sum().backward()
    """),
    case("F1: a chunk written in a nested helper (gail log_stds.clamp_)", """
        import torch
        import torch.nn as nn

        def clamp_log_stds(log_stds):
            log_stds.clamp_(-20, 2)  # expect: GG003
            return log_stds

        net = nn.Linear(3, 4)
        means, log_stds = net(torch.randn(2, 3)).chunk(2, dim=-1)
        log_stds = clamp_log_stds(log_stds)
        (means.sum() + log_stds.exp().sum()).backward()
    """),
    case("F1: q, k, v from chunk, q scaled in place (fairseq-style q *= scaling)", """
        import torch
        import torch.nn as nn

        proj = nn.Linear(4, 12)
        q, k, v = proj(torch.randn(2, 4)).chunk(3, dim=-1)
        q *= 0.5  # expect: GG003
        (q @ k.t() @ v).sum().backward()
    """),
]

VALID = [
    case("F1: the chunks rescaled out of place", """
        import torch
        flow = torch.randn(1, 2, 4, 4, requires_grad=True) * 1
        u, v = flow.chunk(2, dim=1)
        u = u * 2.0
        (u.sum() + v.sum()).backward()
    """),
    case("F1: rows clamped through an index, not through iteration's views", """
        import torch
        a = torch.rand(3, 4, 2, requires_grad=True)
        b = a * 1
        for i in range(b.shape[0]):
            b[i, :, 0].clamp_(min=0, max=0.3)
        b.sum().backward()
    """),
]
