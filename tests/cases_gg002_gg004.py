"""GG002 (leaf in place), GG003 (forbidden views), GG004 (parameters updated too early).

Every case is a runnable script; tests/test_rule_cases_under_torch.py checks the labels.
"""

from rulecases import case

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
    case("GG003: writing into an output of unbind", """
        import torch
        x = torch.randn(3, 4, requires_grad=True)
        rows = (x * 1).unbind(0)
        rows[0].mul_(2)  # expect: GG003
        sum(r.sum() for r in rows).backward()
    """),
    case("GG003: writing into a chunk", """
        import torch
        x = torch.randn(4, 4, requires_grad=True)
        a, b = (x * 1).chunk(2, dim=0)
        a.add_(1)  # expect: GG003
        (a.sum() + b.sum()).backward()
    """),
    case("GG003: writing into a view of a leaf", """
        import torch
        w = torch.randn(4, requires_grad=True)
        w[0:2].zero_()  # expect: GG003
        w.sum().backward()
    """),
    case("GG003: a view made under no_grad written with grad on", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = x * 1
        with torch.no_grad():
            v = y[0:2]
        v.mul_(2)  # expect: GG003
        y.sum().backward()
    """),
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
    case("GG003: chunks rebuilt out of place", """
        import torch
        x = torch.randn(4, 4, requires_grad=True)
        a, b = (x * 1).chunk(2, dim=0)
        a = a + 1
        (a.sum() + b.sum()).backward()
    """),
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
