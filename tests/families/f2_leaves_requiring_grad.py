"""Family 2 of issue 16: an in-place write on a leaf that requires grad (``.zero_()``,
``x[...] = v``, ``F.relu(x, inplace=True)``), including tensors that became such leaves by
``requires_grad_(True)``, ``nn.Parameter`` or a forward hook.

The smallest real code that triggers it (INVALID, marked ``# expect: GG002``) and the
closest code that must not (VALID); tests/test_families.py runs each statically and under
torch. Cases GradGuard does not get right yet are ``missed`` (a strict xfail).
"""

from tests.rulecases import case

FAMILY = "2"

INVALID = [
    case("F2: F.relu(x, inplace=True) on an input made with requires_grad=True", """
        import torch
        import torch.nn.functional as F
        x = torch.randn(4, requires_grad=True)
        y = F.relu(x, inplace=True)  # expect: GG002
        y.sum().backward()
    """),
    case("F2: a tensor made a leaf by requires_grad_(True), then zeroed", """
        import torch
        s = torch.randn(4)
        s.requires_grad_(True)
        s.zero_()  # expect: GG002
    """),
    case("F2: masked assignment into embeddings that a forward hook made require grad "
         "(enable_input_require_grads, qwen2vl_image_mask)", """
        import torch
        import torch.nn as nn

        embed = nn.Embedding(10, 4)
        embed.weight.requires_grad_(False)
        embed.register_forward_hook(lambda module, args, output: output.requires_grad_(True))
        inputs_embeds = embed(torch.tensor([[1, 2, 3]]))
        image_mask = torch.tensor([[False, True, False]])
        inputs_embeds[image_mask] = torch.ones(1, 4)  # expect: GG002
        inputs_embeds.sum().backward()
    """),
]

VALID = [
    case("F2: the activation out of place on the leaf", """
        import torch
        import torch.nn.functional as F
        x = torch.randn(4, requires_grad=True)
        y = F.relu(x)
        y.sum().backward()
    """),
    case("F2: the leaf written under no_grad before it is used", """
        import torch
        s = torch.randn(4)
        s.requires_grad_(True)
        with torch.no_grad():
            s.zero_()
        (s * 2).sum().backward()
    """),
]
