# Source: https://github.com/keras-team/keras-core/pull/405
# Report: "Copy torch tensor before update in `slice_update`": the torch backend's
#   slice_update wrote the updates into its input, which fails when gradients are needed
#   for it: "RuntimeError: a leaf Variable that requires grad is being used in an in-place
#   operation." With the change "the slice is no longer considered in place for the input
#   variable".
# In-place op: line 28 (`inputs[slices] = updates`).
# Fix: fixed/keras_slice_update.py, the merged change: clone, then update the clone.
# Shrunk: the backend function alone (convert_to_tensor reduced to torch.as_tensor), applied
#   to a trainable variable.
import torch


def convert_to_tensor(x, dtype=None):
    return x if isinstance(x, torch.Tensor) else torch.as_tensor(x, dtype=dtype)


def slice_update(inputs, start_indices, updates):
    inputs = convert_to_tensor(inputs)
    start_indices = convert_to_tensor(start_indices).to(torch.int64)
    updates = convert_to_tensor(updates)

    python_slice = slice
    slices = [
        python_slice(start_index, start_index + update_length)
        for start_index, update_length in zip(start_indices, updates.shape)
    ]
    inputs[tuple(slices)] = updates  # [inplace]
    return inputs


variable = torch.nn.Parameter(torch.zeros(4, 4))
outputs = slice_update(variable, [1, 1], torch.ones(2, 2))
(outputs * torch.arange(16.0).view(4, 4)).sum().backward()
print(variable.grad)
