"""Family 8 of issue 16: contexts that change the rules. Inside
``torch.autograd.graph.allow_mutation_on_saved_tensors()`` writes into saved tensors are
legal; under ``torch.no_grad()`` or ``torch.inference_mode()`` they are not (the write
still bumps the version counter); a weight edited under ``no_grad`` between a forward and
its backward is the optimizer-step family again (GG004).

The smallest real code that triggers it (INVALID, marked ``# expect: GG00N``) and the
closest code that must not (VALID); tests/test_families.py runs each statically and under
torch. Cases GradGuard does not get right yet are ``missed`` (a strict xfail).
"""

from tests.rulecases import case

FAMILY = "8"

INVALID = [
    case("F8: a write under no_grad into a tensor sigmoid saved", """
        import torch
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        with torch.no_grad():
            y.mul_(2)  # expect: GG001
        y.sum().backward()
    """),
    case("F8: a parameter copied into under no_grad between forward and backward "
         "(no_grad_param_copy)", """
        import torch
        import torch.nn as nn
        layer = nn.Linear(3, 2)
        out = layer(torch.randn(4, 3, requires_grad=True))
        with torch.no_grad():
            layer.weight.copy_(torch.zeros(2, 3))  # expect: GG004
        out.sum().backward()
    """),
    case("F8: Embedding(max_norm) renormalises its weight in place on the second lookup "
         "(embedding_max_norm_renorm)", """
        import torch
        import torch.nn as nn
        embedding = nn.Embedding(5, 3, max_norm=0.1)
        W = torch.randn(4, 3, requires_grad=True)
        idx = torch.tensor([1, 2])
        a = embedding.weight @ W.t()
        b = embedding(idx) @ W.t()  # expect: GG004
        (a.sum() + b.sum()).backward()
    """),
]

VALID = [
    case("F8: the same write inside allow_mutation_on_saved_tensors()", """
        import torch
        with torch.autograd.graph.allow_mutation_on_saved_tensors():
            x = torch.randn(4, requires_grad=True)
            y = torch.sigmoid(x)
            y.mul_(2)
            y.sum().backward()
    """),
    case("F8: the weight edited under no_grad after the backward", """
        import torch
        import torch.nn as nn
        layer = nn.Linear(3, 2)
        out = layer(torch.randn(4, 3, requires_grad=True))
        out.sum().backward()
        with torch.no_grad():
            layer.weight.copy_(torch.zeros(2, 3))
    """),
]
