# Source: https://github.com/pytorch/pytorch/issues/114505
# Report: computing a Jacobian of a function that fills a zero tensor column by column
#   (`b[:, 0] = a[:, 0]`, then `b[:, 1] = Softplus()(b[:, 0])`) fails with "... which is
#   output 0 of AsStridedBackward0, is at version 2; expected version 1". The reporter
#   thought softplus itself was in place; a maintainer explains that softplus saved its
#   input, the column view b[:, 0], and the assignment to b[:, 1] writes into the same
#   tensor, whose version counter is shared by all its views.
# In-place op: line 20 (`b[:, 1] = ...` writes into b, whose view softplus saved).
# Saved by: line 20 (`torch.nn.Softplus()(b[:, 0])`: softplus keeps its input).
# Fix: fixed/softplus_slice_into_saved_column.py, the reporter's workaround the maintainer
#   confirms: softplus is given `b[:, 0].clone()`.
# Shrunk: the thread's function under torch.autograd.functional.jacobian, random input.
import torch


def fill_columns(a):
    b = torch.zeros_like(a)
    b[:, 0] = a[:, 0]
    first = b[:, 0]
    b[:, 1] = torch.nn.Softplus()(first)  # [saves] [inplace]
    return b


torch.manual_seed(0)
jac = torch.autograd.functional.jacobian(fill_columns, torch.randn(3, 2))
print("jacobian", tuple(jac.shape))
