"""GG004: parameters updated in place (optimizer.step(), weight edits) before a backward
that still needs them.

The smallest real code that triggers it (INVALID, the lines marked ``# expect: GG004``)
and the closest code that must not (VALID), as in docs/rules/GG004.md. Every case
is a runnable script: tests/test_rule_cases_under_torch.py checks each label under torch.
"""

from rulecases import case

RULE = "GG004"

INVALID = [
    case("GG004: optimizer.step() between two backwards through one graph", """
        import torch
        import torch.nn as nn

        D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        opt_d = torch.optim.Adam(D.parameters())
        fake = torch.randn(2, 4, requires_grad=True)
        out = D(fake)
        loss_d = out.mean()
        loss_g = -out.mean()
        loss_d.backward(retain_graph=True)
        opt_d.step()  # expect: GG004
        loss_g.backward()
    """),
    case("GG004: weights edited in place between forward and backward", """
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 2)
        x = torch.randn(3, 4, requires_grad=True)
        loss = model(x).pow(2).sum()
        with torch.no_grad():
            model.weight.mul_(0.9)  # expect: GG004
        loss.backward()
    """),
]

VALID = [
    case("GG004: the standard GAN order, step after each backward", """
        import torch
        import torch.nn as nn

        G = nn.Linear(2, 4)
        D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        opt_g = torch.optim.Adam(G.parameters())
        opt_d = torch.optim.Adam(D.parameters())
        fake = G(torch.randn(3, 2))
        loss_d = D(fake.detach()).mean()
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()
        loss_g = -D(fake).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
    """),
    case("GG004: a training loop with step after backward", """
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            loss = model(torch.randn(3, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """),
]
