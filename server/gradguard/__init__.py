"""GradGuard: finds PyTorch autograd in-place hazards in source code."""

__version__ = "0.1.0"
