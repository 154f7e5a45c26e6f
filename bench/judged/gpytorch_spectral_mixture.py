"""gpytorch 1.15.2, gpytorch/kernels/spectral_mixture_kernel.py:336, 338 (GG001:
``.mul_()`` and ``exp_term.exp_()`` after ``(x1_exp_ - x2_exp_).pow_(2)``).

Judged false. ``pow_``'s backward needs its original input, and autograd keeps its own
copy of it for an in-place op: writing the result afterwards breaks nothing.
"""

import torch
from gpytorch.kernels import SpectralMixtureKernel
from judge import judge


def with_gradients() -> None:
    kernel = SpectralMixtureKernel(num_mixtures=3, ard_num_dims=2)
    x = torch.randn(6, 2, requires_grad=True)
    kernel(x, x).to_dense().sum().backward()


judge(with_gradients=with_gradients)
