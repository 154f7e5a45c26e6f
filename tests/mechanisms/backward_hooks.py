"""Module backward hooks (issue 28): ``register_full_backward_hook`` (and the full
backward pre-hook) runs the module between two BackwardHookFunctions, so what it is given
(when any of it requires grad) and what it returns are views that no in-place op may
write: "Output 0 of BackwardHookFunctionBackward is a view and is being modified inplace".
Interpretability tools (Grad-CAM, LRP) and second-order optimisers hook layers this way,
and a model's ``ReLU(inplace=True)`` then fails.

Specifications of the analysis only: the probe and the fixes are not yet held to these
(their rule-case files are the next step).
"""

from __future__ import annotations

from tests.rulecases import Case, case

INVALID: list[Case] = [
    case("GG003: the layer found by name through _modules is not the in-place one", """
        import torch
        from torch import nn

        def find_layer(model, name):
            parts = name.split("_")
            layer = model._modules[parts[0]]
            for part in parts[1:]:
                layer = layer._modules[part]
            return layer

        inner = nn.Sequential(nn.SiLU(inplace=True), nn.Linear(3, 3))
        net = nn.Sequential(nn.Linear(3, 3), inner)
        find_layer(net, "1_1").register_full_backward_hook(lambda m, grad_in, grad_out: None)
        net(torch.randn(2, 3, requires_grad=True)).sum().backward()
    """),
    case("GG003: the hooked layer found by a name a string spells, through _modules "
         "(yolov5-gradcam's find_yolo_layer)", """
        import torch
        from torch import nn

        def find_layer(model, name):
            parts = name.split("_")
            layer = model._modules[parts[0]]
            for part in parts[1:]:
                layer = layer._modules[part]
            return layer

        inner = nn.Sequential(nn.Linear(3, 3), nn.SiLU(inplace=True))  # expect: GG003
        net = nn.Sequential(nn.Linear(3, 3), inner)
        find_layer(net, "1_1").register_full_backward_hook(lambda m, grad_in, grad_out: None)
        net(torch.randn(2, 3, requires_grad=True)).sum().backward()
    """),
    case("GG003: an in-place layer after a layer with a full backward hook", """
        import torch
        from torch import nn

        conv = nn.Conv2d(3, 8, 3, padding=1)
        act = nn.ReLU(inplace=True)
        conv.register_full_backward_hook(lambda module, grad_in, grad_out: None)
        x = torch.rand(1, 3, 16, 16)
        act(conv(x)).mean().backward()  # expect: GG003
    """),
    case("GG003: the hooked layer is the in-place one: its input is the view", """
        import torch
        from torch import nn

        act = nn.ReLU(inplace=True)
        act.register_full_backward_hook(lambda module, grad_in, grad_out: None)
        x = torch.randn(4, requires_grad=True)
        act(x * 2).sum().backward()  # expect: GG003
    """),
    case("GG003: every submodule hooked through named_modules, a project module's output", """
        import torch
        import torch.nn as nn

        class Combine(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.ones(2))

            def forward(self, xs):
                return sum(x * w for x, w in zip(xs, self.w))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.combine = Combine()
                self.act = nn.ReLU6(inplace=True)

            def forward(self, xs):
                return self.act(self.combine(xs))  # expect: GG003

        net = Net()
        for name, module in net.named_modules():
            if name:
                module.register_full_backward_hook(lambda m, grad_in, grad_out: None)
        net([torch.randn(4), torch.randn(4)]).sum().backward()
    """),
    case("GG003: a Grad-CAM extractor hooks the layer from its __init__", """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1),
                              nn.ReLU(inplace=True))  # expect: GG003

        class Extractor:
            def __init__(self, layer):
                self.activations = None
                layer.register_forward_hook(self.keep)
                layer.register_full_backward_hook(self.keep_grad)

            def keep(self, module, inputs, output):
                self.activations = output.detach()

            def keep_grad(self, module, grad_in, grad_out):
                self.grad = grad_out[0].detach()

        extractor = Extractor(model[0])
        model(torch.rand(1, 3, 16, 16)).mean().backward()
    """),
]

VALID: list[Case] = [
    case("GG003: the layer after the hooked one is not in place", """
        import torch
        from torch import nn

        conv = nn.Conv2d(3, 8, 3, padding=1)
        act = nn.ReLU()
        conv.register_full_backward_hook(lambda module, grad_in, grad_out: None)
        x = torch.rand(1, 3, 16, 16)
        act(conv(x)).mean().backward()
    """),
    case("GG003: a tensor hook on the output instead (the maintainers' fix)", """
        import torch
        from torch import nn

        conv = nn.Conv2d(3, 8, 3, padding=1)
        act = nn.ReLU(inplace=True)
        grads = []

        def keep_grad(module, inputs, output):
            output.register_hook(grads.append)

        conv.register_forward_hook(keep_grad)
        x = torch.rand(1, 3, 16, 16)
        act(conv(x)).mean().backward()
    """),
    case("GG003: a hooked layer run under no_grad hands on plain tensors", """
        import torch
        from torch import nn

        conv = nn.Conv2d(3, 8, 3, padding=1)
        act = nn.ReLU(inplace=True)
        conv.register_full_backward_hook(lambda module, grad_in, grad_out: None)
        with torch.no_grad():
            act(conv(torch.rand(1, 3, 16, 16)))
    """),
]

