"""Family 6 of issue 16: a hazard that exists for one value of a constructor argument or
config field (an activation chosen by name, ``act_cfg``, ``inplace`` passed down, a
``norm_type`` that turns a layer into the identity, ``if self.training`` switches).

The smallest real code that triggers it (INVALID, marked ``# expect: GG001``) and the
closest code that must not (VALID: the same code with the setting that is safe);
tests/test_families.py runs each statically and under torch. Cases GradGuard does not get
right yet are ``missed`` (a strict xfail).
"""

from tests.rulecases import case

FAMILY = "6"

INVALID = [
    case("F6: an activation chosen by name, 'relu', before `out += residual` "
         "(yolov4_csp_relu_residual)", """
        import torch
        import torch.nn as nn

        class Convolutional(nn.Module):
            def __init__(self, activate="relu"):
                super().__init__()
                self.conv = nn.Conv2d(2, 2, 1)
                if activate == "relu":
                    self.act = nn.ReLU(inplace=True)
                else:
                    self.act = nn.Identity()

            def forward(self, x):
                return self.act(self.conv(x))

        block = Convolutional("relu")
        x = torch.randn(1, 2, 4, 4)
        out = block(x)
        out += x  # expect: GG001
        out.sum().backward()
    """),
    case("F6: norm_type='none' turns the norm into the identity, and the in-place ReLU "
         "then writes the sigmoid's output", """
        import torch
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self, norm_type="none"):
                super().__init__()
                self.act0 = nn.Sigmoid()
                self.norm = nn.Identity() if norm_type == "none" else nn.BatchNorm2d(2)
                self.relu = nn.ReLU(inplace=True)

            def forward(self, x):
                x = self.act0(x)
                return self.relu(self.norm(x))  # expect: GG001

        block = Block(norm_type="none")
        block(torch.randn(1, 2, 4, 4, requires_grad=True)).sum().backward()
    """),
    case("F6: an `if not self.training` branch that writes into a sigmoid's output "
         "(yolov7_detect_tta)", """
        import torch
        import torch.nn as nn

        class Detect(nn.Module):
            def __init__(self):
                super().__init__()
                self.m = nn.Conv2d(2, 4, 1)

            def forward(self, x):
                x = self.m(x)
                if not self.training:
                    y = x.sigmoid()
                    y[..., 0:2] = y[..., 0:2] * 2.0  # expect: GG001
                    return y
                return x

        detect = Detect()
        detect.eval()
        detect(torch.randn(1, 2, 4, 4)).sum().backward()
    """),
]

VALID = [
    case("F6: the same block with its safe setting, an activation that saves nothing "
         "written", """
        import torch
        import torch.nn as nn

        class Convolutional(nn.Module):
            def __init__(self, activate="relu"):
                super().__init__()
                self.conv = nn.Conv2d(2, 2, 1)
                if activate == "relu":
                    self.act = nn.ReLU(inplace=True)
                else:
                    self.act = nn.Identity()

            def forward(self, x):
                return self.act(self.conv(x))

        block = Convolutional("linear")
        x = torch.randn(1, 2, 4, 4)
        out = block(x)
        out += x
        out.sum().backward()
    """),
    case("F6: norm_type='bn': the in-place ReLU writes the batch norm's output", """
        import torch
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self, norm_type="none"):
                super().__init__()
                self.act0 = nn.Sigmoid()
                self.norm = nn.Identity() if norm_type == "none" else nn.BatchNorm2d(2)
                self.relu = nn.ReLU(inplace=True)

            def forward(self, x):
                x = self.act0(x)
                return self.relu(self.norm(x))

        block = Block(norm_type="bn")
        block(torch.randn(1, 2, 4, 4, requires_grad=True)).sum().backward()
    """, missed=True),
]
