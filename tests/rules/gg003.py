"""GG003: an in-place write to a view autograd forbids modifying (split/chunk/unbind
outputs, views of leaves, views made under no_grad).

The smallest real code that triggers it (INVALID, the lines marked ``# expect: GG003``)
and the closest code that must not (VALID), as in docs/rules/GG003.md. Every case
is a runnable script: tests/test_rule_cases_under_torch.py checks each label under torch.
"""

from tests.rulecases import case

RULE = "GG003"

INVALID = [
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
    case("GG003: channels of a tensor set to require grad (`.requires_grad = True`), "
         "written in a loop", """
        import torch
        x = torch.rand(3, 4, 4) - 0.5
        x.requires_grad = True
        d = x.cpu().clone()
        for channel, mean in zip(d, [0.1, 0.2, 0.3]):
            channel.mul_(mean)  # expect: GG003
        d.sum().backward()
    """),
    case("GG003: the last layer of a Sequential, its bias edited by index", """
        import torch
        import torch.nn as nn

        model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 2))
        model[-1].bias[0] += 1  # expect: GG003
        model(torch.randn(2, 3)).sum().backward()
    """),
]

VALID = [
    case("GG003: chunks rebuilt out of place", """
        import torch
        x = torch.randn(4, 4, requires_grad=True)
        a, b = (x * 1).chunk(2, dim=0)
        a = a + 1
        (a.sum() + b.sum()).backward()
    """),
    case("GG003: channels written by index, not through the views iteration makes", """
        import torch
        x = torch.rand(3, 4, 4) - 0.5
        x.requires_grad = True
        d = x.cpu().clone()
        for i, mean in enumerate([0.1, 0.2, 0.3]):
            d[i] = d[i] * mean
        d.sum().backward()
    """),
    case("GG003: the last layer of a Sequential, its bias edited under no_grad", """
        import torch
        import torch.nn as nn

        model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 2))
        with torch.no_grad():
            model[-1].bias[0] += 1
    """),
]

# Views kept across paths (issue 16, family 1).
INVALID += [
    case("GG003: a chunk on one path, its own tensor on the other, written after the "
         "join (fairseq's multihead attention, q *= scaling)", """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Attention(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 12)

            def forward(self, query):
                key = query
                same = query.data_ptr() == key.data_ptr()
                if same:
                    q, k, v = self.proj(query).chunk(3, dim=-1)
                else:
                    q = F.linear(query, self.proj.weight[:4], self.proj.bias[:4])
                q *= 0.5  # expect: GG003
                return q

        Attention()(torch.randn(2, 4)).sum().backward()
    """),
]

VALID += [
    case("GG003: a chunk on one path, scaled out of place after the join", """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Attention(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 12)

            def forward(self, query):
                key = query
                same = query.data_ptr() == key.data_ptr()
                if same:
                    q, k, v = self.proj(query).chunk(3, dim=-1)
                else:
                    q = F.linear(query, self.proj.weight[:4], self.proj.bias[:4])
                q = q * 0.5
                return q

        Attention()(torch.randn(2, 4)).sum().backward()
    """),
]

INVALID += [
    case("GG003: a gate's slice of an LSTM bias, reached by a computed name, written "
         "through chunk (BiDAF)", """
        import torch
        import torch.nn as nn

        rnn = nn.LSTM(3, 4)
        for i in range(rnn.num_layers):
            getattr(rnn, f"bias_hh_l{i}").chunk(4)[1].fill_(1)  # expect: GG003
        out, _ = rnn(torch.randn(5, 2, 3))
        out.sum().backward()
    """),
]

VALID += [
    case("GG003: a gate's slice of an LSTM bias written under no_grad", """
        import torch
        import torch.nn as nn

        rnn = nn.LSTM(3, 4)
        with torch.no_grad():
            for i in range(rnn.num_layers):
                getattr(rnn, f"bias_hh_l{i}").chunk(4)[1].fill_(1)
        out, _ = rnn(torch.randn(5, 2, 3))
        out.sum().backward()
    """),
]
