"""GG001: an in-place write to a tensor (or a view of it) that an earlier op saved for backward.

The smallest real code that triggers it (INVALID, the lines marked ``# expect: GG001``)
and the closest code that must not (VALID), as in docs/rules/GG001.md. Every case
is a runnable script: tests/test_rule_cases_under_torch.py checks each label under torch.
"""

from tests.rulecases import case

RULE = "GG001"

INVALID = [
    case("inplace relu method after sigmoid", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        y.relu_()  # expect: GG001
        y.sum().backward()
    """),
    case("augmented add on the output of exp", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = x.exp()
        y += 1  # expect: GG001
        y.sum().backward()
    """),
    case("ReLU(inplace=True) module after Sigmoid module", """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.sig = nn.Sigmoid()
                self.relu = nn.ReLU(inplace=True)

            def forward(self, x):
                x = self.sig(self.fc(x))
                return self.relu(x)  # expect: GG001

        Net()(torch.randn(2, 4)).sum().backward()
    """),
    case("Sigmoid then ReLU(inplace=True) inside one Sequential", """
        import torch
        from torch import nn

        model = nn.Sequential(
            nn.Linear(4, 4),
            nn.Sigmoid(),
            nn.ReLU(inplace=True),  # expect: GG001
        )
        model(torch.randn(2, 4)).sum().backward()
    """),
    case("functional relu with inplace=True after tanh", """
        import torch
        import torch.nn.functional as F
        w = torch.randn(4, 4, requires_grad=True)
        h = torch.tanh(torch.randn(2, 4) @ w)
        out = F.relu(h, inplace=True)  # expect: GG001
        out.sum().backward()
    """),
    case("positional inplace flag of LeakyReLU after softmax", """
        import torch
        import torch.nn as nn
        act = nn.LeakyReLU(0.1, True)
        x = torch.randn(2, 5, requires_grad=True)
        p = torch.softmax(x, dim=1)
        q = act(p)  # expect: GG001
        q.sum().backward()
    """),
    case("two in-place ReLUs in a row", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = x * 2
        y.relu_()
        y.relu_()  # expect: GG001
        y.sum().backward()
    """),
    case("write into a slice of a tensor whose view was saved", """
        import torch
        import torch.nn.functional as F
        w = torch.randn(3, 6, requires_grad=True)
        preds = torch.randn(2, 3) @ w
        target = torch.rand(2)
        loss = F.binary_cross_entropy_with_logits(preds[:, 4], target)
        preds[:, 0:2] = 0.0  # expect: GG001
        loss.backward()
    """),
    case("transpose view of a saved tensor written in place", """
        import torch
        x = torch.randn(3, 3, requires_grad=True)
        y = torch.sigmoid(x)
        y.t().mul_(2)  # expect: GG001
        y.sum().backward()
    """),
    case("einsum contraction saves its inputs", """
        import torch
        a = torch.randn(2, 3, 4, requires_grad=True)
        b = torch.randn(2, 4, 5, requires_grad=True)
        q = a * 1
        out = torch.einsum("bij,bjk->bik", q, b)
        q.add_(1)  # expect: GG001
        out.sum().backward()
    """),
    case("out= into a saved tensor", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.tanh(x)
        z = y.sum()
        with torch.no_grad():
            torch.add(x, 1, out=y)  # expect: GG001
        z.backward()
    """),
    case("helper method called from forward", """
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def squash(self, x):
                return torch.sigmoid(x)

            def forward(self, x):
                y = self.squash(self.fc(x))
                y.mul_(2)  # expect: GG001
                return y

        Head()(torch.randn(2, 4)).sum().backward()
    """),
    case("module instance reused twice", """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.act = nn.ReLU(inplace=True)

            def forward(self, x):
                x = self.act(self.fc(x))
                return self.act(x)  # expect: GG001

        Net()(torch.randn(2, 4)).sum().backward()
    """),
    case("value flowing through a loop", """
        import torch
        w = torch.randn(4, 4, requires_grad=True)
        h = torch.randn(2, 4)
        outputs = torch.zeros(3, 2, 4)
        total = 0
        for t in range(3):
            h = torch.tanh(h @ w)
            outputs[t] = h  # expect: GG001
            total = total + (outputs * h).sum()
        (total + outputs.sum()).backward()
    """),
    case("user module whose output an inplace dropout overwrites", """
        import torch
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3, padding=1)
                self.bn = nn.BatchNorm2d(4)
                self.relu = nn.ReLU(inplace=True)

            def forward(self, x):
                return self.relu(self.bn(self.conv(x)))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()
                self.head = nn.Sequential(
                    nn.Dropout(0.5, inplace=True),  # expect: GG001
                    nn.Conv2d(4, 2, 1),
                )

            def forward(self, x):
                return self.head(self.block(x))

        Net()(torch.randn(2, 3, 8, 8)).sum().backward()
    """),
    case("GG001: an item of a tensor replaced by a conv of itself", """
        import torch
        import torch.nn as nn

        class Refine(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 3, 1)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                for i in range(x.shape[0] - 1):
                    x[i + 1] = self.conv(x[i + 1])  # expect: GG001
                return x

        Refine()(torch.randn(3, 3, 3, 4, 4, requires_grad=True).clone()).sum().backward()
    """),
    case("GG001: a tensor saved on one arm of a branch, written after it", """
        import torch
        import torch.nn as nn

        class Gate(nn.Module):
            def __init__(self, gated=True):
                super().__init__()
                self.gate = nn.Linear(4, 4)
                self.gated = gated

            def forward(self, x):
                h = x * 1.0
                if self.gated:
                    x = x + self.gate(h)
                h *= 2  # expect: GG001
                return x + h

        Gate(True)(torch.randn(2, 4, requires_grad=True)).sum().backward()
    """),
    case("GG001: the output of amax written, then the scores it returns carry gradient", """
        import torch
        import torch.nn as nn

        class BlockScorer(nn.Module):
            def __init__(self):
                super().__init__()
                self.q = nn.Linear(4, 4)

            def forward(self, x):
                scores = self.q(x) @ x.transpose(-1, -2)
                block_scores = scores.amax(dim=-1)
                local = torch.zeros_like(block_scores[..., :1], dtype=torch.long)
                block_scores.scatter_(-1, local, float("inf"))  # expect: GG001
                top_scores, top_indices = block_scores.topk(1, dim=-1)
                return top_scores

        BlockScorer()(torch.randn(3, 4, requires_grad=True)).sum().backward()
    """),
    case("GG001: a comprehension over layers, each call seen (sigmoid saves its output)", """
        import torch
        import torch.nn as nn

        acts = [nn.Sigmoid(), nn.Tanh()]
        x = torch.randn(3, requires_grad=True)
        outs = [act(x) for act in acts]
        outs[0].mul_(2)  # expect: GG001
        sum(o.sum() for o in outs).backward()
    """),
    case("GG001: an nn.Sequential subclass given its layers by super().__init__(*layers) "
         "(torchvision's ops.MLP with inplace=True and dropout)", """
        import torch
        import torch.nn as nn

        def layers(inplace):
            found = [nn.Linear(3, 3), nn.ReLU(inplace=inplace)]
            found.append(nn.Dropout(0.5, inplace=inplace))  # expect: GG001
            return found

        class MLP(nn.Sequential):
            def __init__(self, inplace=True):
                super().__init__(*layers(inplace))

        MLP()(torch.randn(2, 3)).sum().backward()
    """),
    case("GG001: the in-place flag given through **params (torchvision's MLP builds its "
         "dropout with **{'inplace': inplace})", """
        import torch
        import torch.nn as nn

        params = {"inplace": True}
        net = nn.Sequential(nn.Linear(3, 3), nn.ReLU(**params),
                            nn.Dropout(0.5, **params))  # expect: GG001
        net(torch.randn(2, 3)).sum().backward()
    """),
    case("GG001: an nn.Sequential subclass filled by add_module", """
        import torch
        import torch.nn as nn

        class Block(nn.Sequential):
            def __init__(self, act):
                super().__init__()
                self.add_module("fc", nn.Linear(3, 3))
                self.add_module("gate", nn.Sigmoid())
                self.add_module("act", act)

        Block(nn.ReLU(inplace=True))(torch.randn(2, 3)).sum().backward()  # expect: GG001
    """),
    case("GG001: a write under no_grad still bumps the version backward checks", """
        import torch

        x = torch.randn(3, requires_grad=True)
        y = x.exp()
        loss = y.sum()
        with torch.no_grad():
            y.mul_(2)  # expect: GG001
        loss.backward()
    """),
    case("GG001: a layer's weight read from dict(named_parameters()), its input written", """
        import torch
        import torch.nn as nn

        layer = nn.Linear(3, 3)
        params = dict(layer.named_parameters())
        h = torch.zeros(2, 3)
        h[0] = torch.tanh(h[1] @ params["weight"].T)  # expect: GG001
        h.sum().backward()
    """),
    case("GG001: every ReLU switched in place by a loop over modules() with isinstance", """
        import torch
        import torch.nn as nn

        net = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), nn.ReLU())  # expect: GG001
        for m in net.modules():
            if isinstance(m, nn.ReLU):
                m.inplace = True
        net(torch.randn(2, 3)).sum().backward()
    """),
]

VALID = [
    case("GG001: the tensor saved on one arm of a branch is not the one written after it "
         "(transformers' Gemma4 per-layer gate)", """
        import torch
        import torch.nn as nn

        class Gate(nn.Module):
            def __init__(self, gated=True):
                super().__init__()
                self.gate = nn.Linear(4, 4)
                self.gated = gated

            def forward(self, h):
                if self.gated:
                    residual = h
                    h = self.gate(h)
                    h = residual + h
                h *= 2
                return h

        Gate(True)(torch.randn(2, 4, requires_grad=True) * 1.0).sum().backward()
    """),
    case("GG001: a callee that returns clamp(h) on one path and h on the other, "
         "written by its caller (transformers' Gemma4 clippable linear)", """
        import torch
        import torch.nn as nn

        class ClippableLinear(nn.Module):
            def __init__(self, clip=True):
                super().__init__()
                self.linear = nn.Linear(4, 4)
                self.clip = clip

            def forward(self, h):
                h = self.linear(h)
                if self.clip:
                    h = torch.clamp(h, -1, 1)
                return h

        class Block(nn.Module):
            def __init__(self, clip=True):
                super().__init__()
                self.end = ClippableLinear(clip)

            def forward(self, x):
                h = self.end(x)
                h += x
                return h

        Block(True)(torch.randn(2, 4, requires_grad=True)).sum().backward()
    """),
    case("GG001: an item of a list annotated list[Tensor] replaced (transformers' "
         "DepthProFeatureUpsample)", """
        import torch
        import torch.nn as nn

        class Upsample(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Conv2d(3, 3, 1) for _ in range(2)])

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return torch.stack(self.refine([x, x * 2, x * 3]))

            def refine(self, features: list[torch.Tensor]) -> list[torch.Tensor]:
                for i in range(2):
                    features[i + 1] = self.blocks[i](features[i + 1])
                return features

        Upsample()(torch.randn(2, 3, 4, 4, requires_grad=True)).sum().backward()
    """),
    case("ReLU(inplace=True) after conv and batch norm", """
        import torch
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3, padding=1)
                self.bn = nn.BatchNorm2d(4)
                self.relu = nn.ReLU(inplace=True)

            def forward(self, x):
                return self.relu(self.bn(self.conv(x)))

        Block()(torch.randn(2, 3, 8, 8)).sum().backward()
    """),
    case("residual += before the final ReLU", """
        import torch
        import torch.nn as nn

        class BasicBlock(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
                self.bn1 = nn.BatchNorm2d(4)
                self.relu = nn.ReLU(inplace=True)
                self.conv2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
                self.bn2 = nn.BatchNorm2d(4)

            def forward(self, x):
                identity = x
                out = self.relu(self.bn1(self.conv1(x)))
                out = self.bn2(self.conv2(out))
                out += identity
                out = self.relu(out)
                return out

        BasicBlock()(torch.randn(2, 4, 8, 8)).sum().backward()
    """),
    case("ReLU(inplace=True) after linear, add, cat, pooling and interpolate", """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        fc = nn.Linear(4, 4)
        x = torch.randn(2, 4, requires_grad=True)
        a = F.relu(fc(x), inplace=True)
        b = F.relu(a + x, inplace=True)
        c = F.relu(torch.cat([b, a], dim=1), inplace=True)
        img = torch.randn(1, 2, 8, 8, requires_grad=True)
        d = F.relu(F.avg_pool2d(img, 2), inplace=True)
        e = F.relu(F.interpolate(d, scale_factor=2.0), inplace=True)
        (c.sum() + e.sum()).backward()
    """),
    case("inplace ops under no_grad on tensors nobody saved", """
        import torch
        w = torch.randn(4, 4, requires_grad=True)
        with torch.no_grad():
            w.mul_(0.5)
            w.add_(1.0)
        (torch.randn(2, 4) @ w).sum().backward()
    """),
    case("inplace on a fresh clone of a saved tensor", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        z = y.clone()
        z.relu_()
        (y.sum() + z.sum()).backward()
    """),
    case("out of place rewrite of the same computation", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        y = y + 1
        y = y.relu()
        y.sum().backward()
    """),
    case("multiplying by a constant saves nothing", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = x * 1
        z = y * 2
        y.add_(1)
        (z.sum() + y.sum()).backward()
    """),
    case("write after backward already ran", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        y.sum().backward()
        y.relu_()
    """),
    case("Dropout(inplace=True) after Linear", """
        import torch
        import torch.nn as nn
        head = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2, inplace=True), nn.Linear(8, 2))
        head(torch.randn(3, 4)).sum().backward()
    """),
    case("SiLU(inplace=True) after batch norm, Hardswish after conv", """
        import torch
        import torch.nn as nn
        net = nn.Sequential(
            nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.SiLU(inplace=True),
            nn.Conv2d(4, 4, 1), nn.Hardswish(inplace=True),
        )
        net(torch.randn(2, 3, 8, 8)).sum().backward()
    """),
    case("writing into a tensor saved only by an op that needs no values", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = x + 0
        z = y.sum()
        y.zero_()
        z.backward()
    """),
    case("GG001: inside allow_mutation_on_saved_tensors a write on a saved tensor is legal",
         """
        import torch

        x = torch.randn(3, requires_grad=True)
        with torch.autograd.graph.allow_mutation_on_saved_tensors():
            y = x.sigmoid()
            y.mul_(2)
            y.sum().backward()
    """),
    case("GG001: the same MLP with inplace=False: the dropout writes a copy", """
        import torch
        import torch.nn as nn

        def layers(inplace):
            found = [nn.Linear(3, 3), nn.ReLU(inplace=inplace)]
            found.append(nn.Dropout(0.5, inplace=inplace))
            return found

        class MLP(nn.Sequential):
            def __init__(self, inplace=False):
                super().__init__(*layers(inplace))

        MLP()(torch.randn(2, 3)).sum().backward()
    """),
    case("GG001: an nn.Sequential subclass whose in-place ReLU follows a linear layer", """
        import torch
        import torch.nn as nn

        class Block(nn.Sequential):
            def __init__(self):
                super().__init__()
                self.add_module("fc", nn.Linear(3, 3))
                self.add_module("act", nn.ReLU(inplace=True))

        Block()(torch.randn(2, 3)).sum().backward()
    """),
    case("GG001: a layer's weight read from dict(named_parameters()), a copy written", """
        import torch
        import torch.nn as nn

        layer = nn.Linear(3, 3)
        params = dict(layer.named_parameters())
        h = torch.zeros(2, 3)
        out = torch.tanh(h[1] @ params["weight"].T)
        h = h.clone()
        h[0] = out
        h.sum().backward()
    """),
    case("GG001: every ReLU switched in place by a loop over modules(), after a linear layer",
         """
        import torch
        import torch.nn as nn

        net = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), nn.Linear(3, 3), nn.ReLU())
        for m in net.modules():
            if isinstance(m, nn.ReLU):
                m.inplace = True
        net(torch.randn(2, 3)).sum().backward()
    """),
]

# Hazards no loss can reach: reported only as uncertain warnings (``--uncertain``),
# never by default; torch runs them to their end.
QUIET = [
    case("GG001: the output of amax written where only the indices of its top-k leave the "
         "function: no backward reaches amax (transformers' MiniMax block indexer)", """
        import torch
        import torch.nn as nn

        class SparseAttention(nn.Module):
            def __init__(self):
                super().__init__()
                self.q = nn.Linear(4, 4)

            def block_indices(self, x):
                scores = self.q(x) @ x.transpose(-1, -2)
                block_scores = scores.amax(dim=-1)
                local = torch.zeros_like(block_scores[..., :1], dtype=torch.long)
                block_scores.scatter_(-1, local, float("inf"))
                top_scores, top_indices = block_scores.topk(1, dim=-1)
                return top_indices.masked_fill(top_scores == float("-inf"), -1)

            def forward(self, x):
                return self.q(x)[self.block_indices(x)]

        SparseAttention()(torch.randn(3, 4, requires_grad=True)).sum().backward()
    """),
]

INVALID += [
    case("GG001: the output of an LSTM, which its backward keeps, written in place", """
        import torch
        import torch.nn as nn

        rnn = nn.LSTM(3, 4)
        out, (h, c) = rnn(torch.randn(5, 2, 3))
        out += 1  # expect: GG001
        (out.sum() + h.sum()).backward()
    """),
]

VALID += [
    case("GG001: the output of an LSTM added to out of place", """
        import torch
        import torch.nn as nn

        rnn = nn.LSTM(3, 4)
        out, (h, c) = rnn(torch.randn(5, 2, 3))
        out = out + 1
        (out.sum() + h.sum()).backward()
    """),
    case("GG001: the hidden state of a GRU written in place after its last use", """
        import torch
        import torch.nn as nn

        rnn = nn.GRU(3, 4)
        out, h = rnn(torch.randn(5, 2, 3))
        loss = out.sum()
        h += 1
        loss.backward()
    """),
]

# A layer handed back by a wrapper (weight_norm, spectral_norm, parametrizations).
INVALID += [
    case("GG001: a layer wrapped by weight_norm is still that layer (VQA classifier)", """
        import torch
        import torch.nn as nn
        from torch.nn.utils import weight_norm

        class Classifier(nn.Module):
            def __init__(self, dropout=0.5):
                super().__init__()
                self.main = nn.Sequential(
                    weight_norm(nn.Linear(4, 8), dim=None),
                    nn.ReLU(),
                    nn.Dropout(dropout, inplace=True),  # expect: GG001
                )

            def forward(self, x):
                return self.main(x)

        Classifier()(torch.randn(2, 4)).sum().backward()
    """),
]

VALID += [
    case("GG001: weight_norm(Linear) then Dropout(inplace=True): Linear keeps no output", """
        import torch
        import torch.nn as nn
        from torch.nn.utils import weight_norm

        class Classifier(nn.Module):
            def __init__(self, dropout=0.5):
                super().__init__()
                self.main = nn.Sequential(
                    weight_norm(nn.Linear(4, 8), dim=None),
                    nn.Dropout(dropout, inplace=True),
                )

            def forward(self, x):
                return self.main(x)

        Classifier()(torch.randn(2, 4)).sum().backward()
    """),
]

# A Sequential grown after it was built (add_module, append), also by a helper.
INVALID += [
    case("GG001: a Sequential grown by add_module: ReLU(inplace=True) after Sigmoid", """
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential()
                self.body.add_module("fc", nn.Linear(4, 4))
                self.body.add_module("sig", nn.Sigmoid())
                self.body.add_module("act", nn.ReLU(inplace=True))  # expect: GG001

            def forward(self, x):
                return self.body(x)

        Head()(torch.randn(2, 4)).sum().backward()
    """),
    case("GG001: a shortcut conv keeps the block's input, the body's first ReLU(inplace=True) "
         "overwrites it (Xception unit)", """
        import torch
        import torch.nn as nn

        class Unit(nn.Module):
            def __init__(self):
                super().__init__()
                self.shortcut = nn.Conv2d(3, 4, 1)
                self.body = nn.Sequential()
                self.body.add_module("act", nn.ReLU(inplace=True))  # expect: GG001
                self.body.add_module("conv", nn.Conv2d(3, 4, 3, padding=1))

            def forward(self, x):
                identity = self.shortcut(x)
                return self.body(x) + identity

        Unit()(torch.randn(2, 3, 8, 8)).sum().backward()
    """),
    case("GG001: a helper appends Sigmoid then ReLU(inplace=True) to the caller's "
         "Sequential", """
        import torch
        import torch.nn as nn

        def grow(body):
            body.append(nn.Sigmoid())
            body.append(nn.ReLU(inplace=True))  # expect: GG001

        body = nn.Sequential(nn.Linear(4, 4))
        grow(body)
        body(torch.randn(2, 4)).sum().backward()
    """),
]

VALID += [
    case("GG001: a Sequential grown by add_module: ReLU(inplace=True) after Linear", """
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential()
                self.body.add_module("fc", nn.Linear(4, 4))
                self.body.add_module("act", nn.ReLU(inplace=True))

            def forward(self, x):
                return self.body(x)

        Head()(torch.randn(2, 4)).sum().backward()
    """),
    case("GG001: a shortcut conv keeps the block's input, the body convolves before its "
         "ReLU(inplace=True)", """
        import torch
        import torch.nn as nn

        class Unit(nn.Module):
            def __init__(self):
                super().__init__()
                self.shortcut = nn.Conv2d(3, 4, 1)
                self.body = nn.Sequential()
                self.body.add_module("conv", nn.Conv2d(3, 4, 3, padding=1))
                self.body.add_module("act", nn.ReLU(inplace=True))

            def forward(self, x):
                identity = self.shortcut(x)
                return self.body(x) + identity

        Unit()(torch.randn(2, 3, 8, 8)).sum().backward()
    """),
    case("GG001: a helper appends Linear then ReLU(inplace=True) to the caller's "
         "Sequential", """
        import torch
        import torch.nn as nn

        def grow(body):
            body.append(nn.Linear(4, 4))
            body.append(nn.ReLU(inplace=True))

        body = nn.Sequential(nn.Linear(4, 4))
        grow(body)
        body(torch.randn(2, 4)).sum().backward()
    """),
]

# A layer picked from a table by a constructor's argument (family 6).
INVALID += [
    case("GG001: ReLU(inplace=True) picked from a table by the default activation, then a "
         "residual added in place (YOLOv4's CSP block)", """
        import torch
        import torch.nn as nn

        activations = {"relu": nn.ReLU, "none": nn.Identity}

        class Conv(nn.Module):
            def __init__(self, activate="relu"):
                super().__init__()
                self.conv = nn.Conv2d(4, 4, 1)
                if activate == "relu":
                    self.act = activations[activate](inplace=True)
                else:
                    self.act = activations[activate]()

            def forward(self, x):
                return self.act(self.conv(x))

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = Conv()

            def forward(self, x):
                out = self.conv(x)
                out += x  # expect: GG001
                return out

        Block()(torch.randn(2, 4, 8, 8)).sum().backward()
    """),
]

VALID += [
    case("GG001: Identity picked from a table by the default activation, then a residual "
         "added in place", """
        import torch
        import torch.nn as nn

        activations = {"relu": nn.ReLU, "none": nn.Identity}

        class Conv(nn.Module):
            def __init__(self, activate="none"):
                super().__init__()
                self.conv = nn.Conv2d(4, 4, 1)
                if activate == "relu":
                    self.act = activations[activate](inplace=True)
                else:
                    self.act = activations[activate]()

            def forward(self, x):
                return self.act(self.conv(x))

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = Conv()

            def forward(self, x):
                out = self.conv(x)
                out += x
                return out

        Block()(torch.randn(2, 4, 8, 8)).sum().backward()
    """),
    case("GG001: the table's entry replaced before the layer is picked from it", """
        import torch
        import torch.nn as nn

        activations = {"act": nn.Sigmoid}
        activations["act"] = nn.Identity
        conv = nn.Conv2d(4, 4, 1)
        act = activations["act"]()
        x = torch.randn(2, 4, 8, 8)
        out = act(conv(x))
        out += x
        out.sum().backward()
    """),
]

# A loop over range(n) of a known small n runs once for each number (YOLOv7's Detect).
INVALID += [
    case("GG001: each level's sigmoid output written in place, the levels replaced one by "
         "one in a loop over range(len(x))", """
        import torch
        import torch.nn as nn

        convs = nn.ModuleList([nn.Conv2d(3, 3, 1), nn.Conv2d(3, 3, 1)])
        x = [torch.randn(1, 3, 4, 4), torch.randn(1, 3, 4, 4)]
        outs = []
        for i in range(len(x)):
            x[i] = convs[i](x[i])
            y = x[i].sigmoid()
            y[..., 0:2] = 0  # expect: GG001
            outs.append(y)
        sum(o.sum() for o in outs).backward()
    """),
]

VALID += [
    case("GG001: each level shifted out of place, then written in place, in a loop over "
         "range(len(x))", """
        import torch
        import torch.nn as nn

        convs = nn.ModuleList([nn.Conv2d(3, 3, 1), nn.Conv2d(3, 3, 1)])
        x = [torch.randn(1, 3, 4, 4), torch.randn(1, 3, 4, 4)]
        outs = []
        for i in range(len(x)):
            x[i] = convs[i](x[i])
            y = x[i] + 1
            y[..., 0:2] = 0
            outs.append(y)
        sum(o.sum() for o in outs).backward()
    """),
]

# Issue 27: what runs only without a graph, what autograd keeps a copy of, and what is
# decidable, on code nobody here wrote (kornia, gpytorch, lightly, mmcv's spelling).
INVALID += [
    case("GG001: pow_ with a tensor exponent keeps its result, which a later write breaks", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = (x * 2).pow_(torch.full((4,), 2.0))
        y.mul_(3)  # expect: GG001
        y.sum().backward()
    """),
    case("GG001: the write is in the arm that runs when the tensor requires grad", """
        import torch

        def scaled(t):
            y = torch.sigmoid(t)
            if y.requires_grad:
                y.mul_(2)  # expect: GG001
            return y

        scaled(torch.randn(4, requires_grad=True)).sum().backward()
    """),
    case("GG001: the write is in the arm that runs when grad mode is on", """
        import torch

        def shifted(t):
            y = t.exp()
            if torch.is_grad_enabled():
                y.add_(1)  # expect: GG001
            return y

        shifted(torch.randn(4, requires_grad=True)).sum().backward()
    """),
    case("GG001: a version check that holds under this torch", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        if torch.__version__ != "parrots":
            y.mul_(2)  # expect: GG001
        y.sum().backward()
    """),
]

VALID += [
    case("GG001: pow_ with a scalar exponent keeps its own copy of the input", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = (x * 2).pow_(2)
        y.mul_(3)
        y.sum().backward()
    """),
    case("GG001: the write is in the arm that runs only when no graph is recorded", """
        import torch

        def scaled(t):
            y = torch.sigmoid(t)
            if y.requires_grad:
                return y * 2
            y.mul_(2)
            return y

        scaled(torch.randn(4, requires_grad=True)).sum().backward()
        with torch.no_grad():
            scaled(torch.randn(4))
    """),
    case("GG001: the fast in-place path is taken only with grad mode off", """
        import torch

        def shifted(t):
            y = t.exp()
            if not torch.is_grad_enabled():
                y.add_(1)
                return y
            return y + 1

        shifted(torch.randn(4, requires_grad=True)).sum().backward()
    """),
    case("GG001: a helper says whether a graph is being recorded", """
        import torch

        def no_graph(*tensors):
            return not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors))

        def eligible(a, b):
            return a.is_contiguous() and no_graph(a, b)

        def shifted(t, u):
            y = t.exp()
            if eligible(t, u):
                y.add_(1)
            return y

        shifted(torch.randn(4, requires_grad=True), torch.randn(4)).sum().backward()
    """),
    case("GG001: a vendor build's branch, never taken under this torch", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        if torch.__version__ == "parrots":
            y.mul_(2)
        y.sum().backward()
    """),
]

INVALID += [
    case("GG001: a slice of a tensor is a view: writing it writes what sigmoid saved", """
        import torch
        x = torch.randn(4, 3, requires_grad=True)
        h = torch.sigmoid(x)
        rows = h[1:]
        rows[0] = 0  # expect: GG001
        rows.sum().backward()
    """),
]

VALID += [
    case("GG001: a slice of a list is a new list: assigning its slot writes no tensor", """
        import torch
        import torch.nn as nn

        norms = nn.ModuleList([nn.LayerNorm(3) for _ in range(2)])
        x = torch.randn(4, 3, requires_grad=True)
        features = [x * 1, x * 2, x * 3]
        features = features[1:]
        for i, norm in enumerate(norms):
            features[i] = norm(features[i])
        sum(f.sum() for f in features).backward()
    """),
]

INVALID += [
    case("GG001: a helper blends in place what sigmoid, applied under a flag, saved", """
        import torch
        import torch.nn as nn


        def blend(dst, src, alpha):
            dst.mul_(1 - alpha).add_(src, alpha=alpha)  # expect: GG001
            return dst


        class Net(nn.Module):
            def __init__(self, use_act=True):
                super().__init__()
                self.use_act = use_act
                self.proj = nn.Linear(4, 4)

            def forward(self, x):
                h = self.proj(x)
                if self.use_act:
                    h = torch.sigmoid(h)
                return blend(h, torch.ones(4), 0.5)


        x = torch.randn(4, requires_grad=True)
        Net(True)(x).sum().backward()
    """),
]

VALID += [
    case("GG001: a helper blends in place the layer's new output or the unsaved input", """
        import torch
        import torch.nn as nn


        def blend(dst, src, alpha):
            dst.mul_(1 - alpha).add_(src, alpha=alpha)
            return dst


        class Net(nn.Module):
            def __init__(self, use_act=True):
                super().__init__()
                self.use_act = use_act
                self.act = nn.GELU()
                self.proj = nn.Linear(4, 4)

            def forward(self, x):
                h = self.proj(x)
                if self.use_act:
                    h = self.act(h)
                return blend(h, torch.ones(4), 0.5)


        for flag in (True, False):
            x = torch.randn(4, requires_grad=True)
            Net(flag)(x).sum().backward()
    """),
]

# Closures: a function defined inside another (or a lambda) reads the names it does not
# bind from where it was defined, and its defaults are evaluated there.
INVALID += [
    case("GG001: a nested function's parameter is the value it is called with", """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)

            def forward(self, x):
                def gate(t):
                    return torch.sigmoid(t)
                y = gate(self.lin(x))
                y.add_(1)  # expect: GG001
                return y

        Net()(torch.randn(2, 4)).sum().backward()
    """),
    case("GG001: a lambda's default is the layer given where it was made", """
        import torch
        import torch.nn as nn

        act = nn.Sigmoid()
        gate = lambda t, layer=act: layer(t)  # noqa: E731
        x = torch.randn(4, requires_grad=True)
        y = gate(x * 2)
        y.mul_(2)  # expect: GG001
        y.sum().backward()
    """),
]

VALID += [
]

# Calls written another way: the first value of a generator, a function mapped over a
# list, a function of a class called on the class, a method looked up by getattr.
INVALID += [
    case("GG001: next() of a generator is the value its first item computes", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = next(torch.sigmoid(t) for t in [x])
        y.mul_(2)  # expect: GG001
        y.sum().backward()
    """),
    case("GG001: map() applies the function to each item", """
        import torch
        x = torch.randn(4, requires_grad=True)
        (y,) = map(torch.sigmoid, [x * 2])
        y.mul_(2)  # expect: GG001
        y.sum().backward()
    """),
]

VALID += [
    case("GG001: map() over a function that writes a copy", """
        import torch
        x = torch.randn(4, requires_grad=True)
        (y,) = map(torch.sigmoid, [x * 2])
        z = y.clone()
        next(iter([z])).mul_(2)
        (y + z).sum().backward()
    """),
]

# The layer chosen by a configuration object, or returned by a property.
INVALID += [
    case("GG001: the layer class held by a SimpleNamespace config", """
        import types
        import torch
        import torch.nn as nn

        config = types.SimpleNamespace(act=nn.Sigmoid)
        act = config.act()
        x = torch.randn(4, requires_grad=True)
        y = act(x * 2)
        y.mul_(2)  # expect: GG001
        y.sum().backward()
    """),
    case("GG001: the layer class a dataclass config holds by default", """
        import dataclasses
        import torch
        import torch.nn as nn

        @dataclasses.dataclass
        class Config:
            act: type = nn.Sigmoid
            width: int = 4

        act = Config().act()
        x = torch.randn(4, requires_grad=True)
        y = act(x * 2)
        y.mul_(2)  # expect: GG001
        y.sum().backward()
    """),
    case("GG001: the layer class given to a dataclass config's constructor", """
        import dataclasses
        import torch
        import torch.nn as nn

        @dataclasses.dataclass
        class Config:
            act: type = nn.ReLU

        act = Config(nn.Sigmoid).act()
        x = torch.randn(4, requires_grad=True)
        y = act(x * 2)
        y.mul_(2)  # expect: GG001
        y.sum().backward()
    """),
]

VALID += [
]

INVALID += [
    case("GG001: functools.partial of an in-place layer class, called", """
        from functools import partial
        import torch
        import torch.nn as nn
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        act = partial(nn.ReLU, inplace=True)()
        act(y)  # expect: GG001
        y.sum().backward()
    """),
]

# Keywords passed on as a dict: ``f(**config)`` and a ``**kwargs`` parameter.
INVALID += [
    case("GG001: an inplace flag given through **config", """
        import torch
        from torch import nn

        config = {"act": {"inplace": True}}
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        nn.ReLU(**config["act"])(y)  # expect: GG001
        y.sum().backward()
    """),
    case("GG001: a builder passes its **kwargs on to the layer", """
        import torch
        from torch import nn

        def build(**options):
            return nn.ReLU(**options)

        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        build(inplace=True)(y)  # expect: GG001
        y.sum().backward()
    """),
]

VALID += [
    case("GG001: a builder whose **kwargs turn the inplace flag off", """
        import torch
        from torch import nn

        def build(**options):
            return nn.ReLU(**options)

        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        build(inplace=False)(y)
        y.sum().backward()
    """),
]

# super(): the base class's method, run on the same instance.
INVALID += [
    case("GG001: a subclass's forward calls its base's through super()", """
        import torch
        import torch.nn as nn

        class Base(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.Sigmoid()

            def forward(self, x):
                return self.act(x)

        class Block(Base):
            def forward(self, x):
                return super().forward(x)

        block = Block()
        x = torch.randn(4, requires_grad=True)
        y = block(x * 2)
        y.mul_(2)  # expect: GG001
        y.sum().backward()
    """),
]

# A backward that keeps its graph (``retain_graph=True``) keeps its saved tensors for the
# next one: a write between them breaks that one, and nothing if none comes.
INVALID += [
    case("write between a backward that kept its graph and the next backward", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        y.sum().backward(retain_graph=True)
        y.relu_()  # expect: GG001
        y.sum().backward()
    """),
]

VALID += [
    case("write after a backward that kept its graph, with no backward after it", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        y.sum().backward(retain_graph=True)
        y.relu_()
    """),
]
