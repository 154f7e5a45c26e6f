# Fixed version of positive/softplus_slice_into_saved_column.py.
# Source: https://github.com/pytorch/pytorch/issues/114505 (the reporter's workaround,
#   confirmed by the maintainer).
# Fix: softplus saves a clone of the column, which the write into b does not change.
import torch


def fill_columns(a):
    b = torch.zeros_like(a)
    b[:, 0] = a[:, 0]
    first = b[:, 0].clone()  # [fix]
    b[:, 1] = torch.nn.Softplus()(first)
    return b


torch.manual_seed(0)
jac = torch.autograd.functional.jacobian(fill_columns, torch.randn(3, 2))
print("jacobian", tuple(jac.shape))
