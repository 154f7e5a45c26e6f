# Fixed version of positive/sigmoid_index_write.py.
# Source: https://github.com/pytorch/pytorch/issues/9391
# Fix: write into a copy of the sigmoid output; the second half of the report (the write
#   into 1/((-a).exp()+1)) is kept: it was already safe, nothing saved that tensor.
import torch

a = torch.tensor([1, 2, 3.], requires_grad=True)
b = a.sigmoid().clone()  # [fix]
b[1] = 2
b.sum().backward()
print(a.grad)

a = torch.tensor([1, 2, 3.], requires_grad=True)
b = 1 / ((-a).exp() + 1)
b[1] = 2
b.sum().backward()
print(a.grad)
