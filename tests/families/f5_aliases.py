"""Family 5 of issue 16: the write lands on a saved tensor through another name: ``y = x``
then ``y *= m``, tuple unpacking, containers (list/dict round-trips), attributes
(``self.cache = x``), a helper that returns its argument.

The smallest real code that triggers it (INVALID, marked ``# expect: GG001``) and the
closest code that must not (VALID); tests/test_families.py runs each statically and under
torch. Cases GradGuard does not get right yet are ``missed`` (a strict xfail).
"""

from tests.rulecases import case

FAMILY = "5"

INVALID = [
    case("F5: `out = x` then slice assignments into out, after a conv saved x "
         "(tsan_csb_out_alias)", """
        import torch
        import torch.nn as nn
        conv = nn.Conv2d(2, 2, 1)
        x = torch.randn(1, 2, 4, 4, requires_grad=True) * 1
        down = conv(x)
        out = x
        out[:, :, 0:2, 0:2] = 0.0  # expect: GG001
        (down.sum() + out.sum()).backward()
    """),
    case("F5: a list round-trip, laterals[i - 1] += ... on ReLU outputs "
         "(nwpu_moc_fpn_laterals)", """
        import torch
        import torch.nn.functional as F
        feats = [torch.randn(1, 2, 4, 4, requires_grad=True),
                 torch.randn(1, 2, 2, 2, requires_grad=True)]
        laterals = [F.relu(f) for f in feats]
        laterals[0] += F.interpolate(laterals[1], size=(4, 4))  # expect: GG001
        sum(t.sum() for t in laterals).backward()
    """),
    case("F5: an attribute alias, self.cache = x, written later", """
        import torch

        class Gate:
            def __call__(self, x):
                self.cache = x
                return torch.sigmoid(x)

        gate = Gate()
        h = torch.sigmoid(torch.randn(4, requires_grad=True))
        g = gate(h)
        gate.cache.mul_(0.5)  # expect: GG001
        g.sum().backward()
    """),
    case("F5: a loss helper that writes into its argument in place (dbloss)", """
        import torch

        def logit_reg(cls_score, weight):
            cls_score += weight  # expect: GG001
            return cls_score

        logits = torch.randn(4, 3, requires_grad=True)
        probs = torch.sigmoid(logits)
        out = logit_reg(probs, 0.1)
        (out.sum() + probs.sum()).backward()
    """),
]

VALID = [
    case("F5: `out = x.clone()` before the slice assignments", """
        import torch
        import torch.nn as nn
        conv = nn.Conv2d(2, 2, 1)
        x = torch.randn(1, 2, 4, 4, requires_grad=True) * 1
        down = conv(x)
        out = x.clone()
        out[:, :, 0:2, 0:2] = 0.0
        (down.sum() + out.sum()).backward()
    """),
    case("F5: a list slot rebound out of place", """
        import torch
        import torch.nn.functional as F
        feats = [torch.randn(1, 2, 4, 4, requires_grad=True),
                 torch.randn(1, 2, 2, 2, requires_grad=True)]
        laterals = [F.relu(f) for f in feats]
        laterals[0] = laterals[0] + F.interpolate(laterals[1], size=(4, 4))
        sum(t.sum() for t in laterals).backward()
    """),
]
