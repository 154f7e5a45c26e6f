"""GG004: parameters updated in place (optimizer.step(), weight edits) before a backward
that still needs them.

The smallest real code that triggers it (INVALID, the lines marked ``# expect: GG004``)
and the closest code that must not (VALID), as in docs/rules/GG004.md. Every case
is a runnable script: tests/test_rule_cases_under_torch.py checks each label under torch.
"""

from tests.rulecases import case

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
    case("GG004: a manual update over named_parameters() between two backwards", """
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 2)
        out = model(torch.randn(3, 4, requires_grad=True))
        out.pow(2).sum().backward(retain_graph=True)
        with torch.no_grad():
            for name, p in model.named_parameters():
                p.sub_(0.1 * p.grad)  # expect: GG004
        out.sum().backward()
    """),
    case("GG004: an embedding with max_norm renormalises the weight an earlier op saved", """
        import torch
        import torch.nn as nn

        emb = nn.Embedding(5, 3, max_norm=1.0)
        w = torch.randn(2, 3, requires_grad=True)
        a = emb.weight @ w.t()
        b = emb(torch.tensor([1, 2]))  # expect: GG004
        (a.sum() + b.sum()).backward()
    """),
    case("GG004: a step over the parameters of a bare nn.Module container", """
        import torch
        import torch.nn as nn

        enc = nn.Module()
        enc.fc = nn.Linear(4, 2)
        opt = torch.optim.SGD(enc.parameters(), lr=0.1)
        out = enc.fc(torch.randn(3, 4, requires_grad=True))
        out.pow(2).sum().backward(retain_graph=True)
        opt.step()  # expect: GG004
        out.sum().backward()
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
    case("GG004: a manual update over named_parameters() after the last backward", """
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 2)
        out = model(torch.randn(3, 4))
        out.pow(2).sum().backward()
        with torch.no_grad():
            for name, p in model.named_parameters():
                p.sub_(0.1 * p.grad)
    """),
    case("GG004: an embedding with max_norm looked up before its weight is used", """
        import torch
        import torch.nn as nn

        emb = nn.Embedding(5, 3, max_norm=1.0)
        w = torch.randn(2, 3, requires_grad=True)
        b = emb(torch.tensor([1, 2]))
        a = emb.weight @ w.t()
        (a.sum() + b.sum()).backward()
    """),
    case("GG004: a step over frozen parameters between two backwards leaves them alone", """
        import torch
        import torch.nn as nn

        backbone = nn.Linear(4, 2)
        backbone.weight.requires_grad_(False)
        backbone.bias.requires_grad_(False)
        opt = torch.optim.SGD(backbone.parameters(), lr=0.1)
        out = backbone(torch.randn(3, 4, requires_grad=True))
        out.pow(2).sum().backward(retain_graph=True)
        opt.step()
        out.sum().backward()
    """),
    case("GG004: a step after a backward that kept its graph, when the next loss is built anew "
         "(even one whose history the analysis cannot follow)", """
        import functools
        import operator

        import torch
        import torch.nn as nn

        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(2):
            loss = functools.reduce(operator.add, [model(torch.randn(2, 4)).pow(2).sum()])
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
    """),
]
