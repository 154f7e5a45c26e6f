# Fixed version of positive/keras_slice_update.py.
# Source: https://github.com/keras-team/keras-core/pull/405
# Fix (the merged pull request): update a clone of the input, so the variable stays
#   untouched and gets a gradient through the clone.
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
    outputs = torch.clone(inputs)  # [fix]
    outputs[tuple(slices)] = updates
    return outputs


variable = torch.nn.Parameter(torch.zeros(4, 4))
outputs = slice_update(variable, [1, 1], torch.ones(2, 2))
(outputs * torch.arange(16.0).view(4, 4)).sum().backward()
print(variable.grad)
