# Source: https://github.com/linkedin/Liger-Kernel/issues/272
# Report: Liger's fused cross entropy computes the loss and, in the same Triton kernel of its
#   forward, stores the gradient into the memory of its input (the logits), which its backward
#   then returns. When the logits come from an op that keeps its output for backward (`exp`
#   in the graph a -exp-> b -liger_ce-> loss), that saved output is overwritten and
#   the op's gradient comes out wrong. The kernel writes through the raw pointer, so autograd's
#   version check sees nothing: no error, wrong gradients. Proposed in the thread: let the
#   user choose to have the gradient stored in new memory.
# In-place op: line 33 (the kernel's store of the gradient into the input's memory, here
#   `_input.data.copy_(...)`, which does not bump the version either).
# Saved by: line 49 (`torch.exp(a)` keeps its output for backward).
# Fix: fixed/liger_ce_forward_writes_exp_output.py, the thread's proposal (the usual fix): the
#   gradient is stored in new memory and the input is left as it was.
# Shrunk: the Triton kernel rebuilt with torch ops over a 4 x 5 batch (mean reduction, no
#   ignore_index, no label smoothing); the graph of the issue on random data.
import json

import torch
import torch.nn.functional as F

torch.manual_seed(0)


class LigerCrossEntropyFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, _input, target):
        BT, V = _input.shape
        logits = _input.detach()
        lse = torch.logsumexp(logits, dim=-1)
        loss = (lse - logits.gather(1, target[:, None]).squeeze(1)).sum() / BT
        # the kernel's second pass: d(loss)/d(logits), stored where the logits were
        grad = (torch.softmax(logits, dim=-1) - F.one_hot(target, V).to(logits.dtype)) / BT
        _input.data.copy_(grad)  # [inplace]
        ctx.save_for_backward(_input.detach())
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        (grad_input,) = ctx.saved_tensors
        return grad_input * grad_output, None


def liger_cross_entropy(logits, target):
    return LigerCrossEntropyFunction.apply(logits, target)


a = torch.randn(4, 5, requires_grad=True)
target = torch.randint(0, 5, (4,))
b = torch.exp(a)  # [saves]
loss = liger_cross_entropy(b, target)
loss.backward()
print("GRADS:", json.dumps(a.grad.flatten().tolist()))
