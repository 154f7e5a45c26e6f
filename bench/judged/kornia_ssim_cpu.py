"""kornia 0.9.0, kornia/metrics/ssim.py:93, 97, 102 (GG001, in ``_ssim_cpu``).

Judged false. ``_ssim_cpu`` runs only when ``_ssim_cpu_eligible`` holds, which requires
``not (torch.is_grad_enabled() and (img1.requires_grad or img2.requires_grad))``: its
in-place arithmetic runs only when no graph is recorded. With gradients the other path
runs and backward is clean; without, there is no backward to break.
"""

import kornia
import torch
from judge import judge


def with_gradients() -> None:
    img1 = torch.rand(1, 3, 16, 16, requires_grad=True)
    img2 = torch.rand(1, 3, 16, 16)
    kornia.metrics.ssim(img1, img2, 5).mean().backward()
    kornia.losses.ssim_loss(img1, img2, 5).backward()


def without_gradients() -> None:
    img1, img2 = torch.rand(1, 3, 16, 16), torch.rand(1, 3, 16, 16)
    with torch.no_grad():
        kornia.metrics.ssim(img1, img2, 5)


judge(with_gradients=with_gradients, without_gradients=without_gradients)
