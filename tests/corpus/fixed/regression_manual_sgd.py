# Fixed version of positive/regression_manual_sgd.py.
# Source: https://github.com/pytorch/examples/pull/779 (regression/main.py; the thread
#   links a follow-up pull request, #781, opened for it)
# Fix: apply the gradient step to param.data, as the merged language-model fix does.
import torch
import torch.nn.functional as F

torch.manual_seed(0)

POLY_DEGREE = 4
W_target = torch.randn(POLY_DEGREE, 1) * 5
b_target = torch.randn(1) * 5


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x):
    """Approximated function."""
    return x.mm(W_target) + b_target.item()


def get_batch(batch_size=32):
    """Builds a batch i.e. (x, f(x)) pair."""
    random = torch.randn(batch_size)
    x = make_features(random)
    y = f(x)
    return x, y


# Define model
fc = torch.nn.Linear(W_target.size(0), 1)

for batch_idx in range(1, 51):
    # Get data
    batch_x, batch_y = get_batch()
    # Reset gradients
    fc.zero_grad()
    # Forward pass
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()
    # Backward pass
    output.backward()
    # Apply gradients
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)  # [fix]
    # Stop criterion
    if loss < 1e-3:
        break

print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
