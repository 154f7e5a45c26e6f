# Fixed version of positive/liger_ce_forward_writes_exp_output.py.
# Source: https://github.com/linkedin/Liger-Kernel/issues/272 (the thread's proposal, the
#   usual fix: the gradient stored in new memory).
# Fix: the forward keeps the gradient in a tensor of its own and leaves its input, the output
#   `exp` saved, untouched.
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
        grad_input = grad.clone()  # [fix]
        ctx.save_for_backward(grad_input)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        (grad_input,) = ctx.saved_tensors
        return grad_input * grad_output, None


def liger_cross_entropy(logits, target):
    return LigerCrossEntropyFunction.apply(logits, target)


a = torch.randn(4, 5, requires_grad=True)
target = torch.randint(0, 5, (4,))
b = torch.exp(a)
loss = liger_cross_entropy(b, target)
loss.backward()
print("GRADS:", json.dumps(a.grad.flatten().tolist()))
