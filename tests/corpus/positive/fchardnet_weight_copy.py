# Source: https://github.com/PingoLH/FCHarDNet/issues/61
# Report: running test.py (the CatConv2d check) raises "RuntimeError: a view of a leaf
#   Variable that requires grad is being used in an in-place operation." at line 107,
#   `cconv.weight[:,:,:,:] = W[:,:,:,:]`: it copies random weights into a module's
#   parameter with grad enabled.
# In-place op: line 39 (`cconv.weight[:,:,:,:] = W[:,:,:,:]`; the bias and the reference
#   conv are set the same way below).
# Fix: fixed/fchardnet_weight_copy.py: do the copies under torch.no_grad() (the issue has
#   no answer; this is the usual way to set parameter values).
# Shrunk: CatConv2d (a CUDA extension upstream) written as a conv over the concatenated
#   inputs; 3 small inputs.
import torch
import torch.nn as nn

torch.manual_seed(0)


class CatConv2d(nn.Conv2d):
    """Convolution over the channel concatenation of a list of inputs."""

    def __init__(self, in_channels, out_channels, kernel_size, relu=False):
        super().__init__(in_channels, out_channels, kernel_size, padding=1, bias=True)
        self.relu = relu

    def forward(self, x_list):
        out = super().forward(torch.cat(x_list, 1))
        return torch.relu(out) if self.relu else out


x_list = [4, 6, 8]
output_ch = 5
img_sz = 9
X_list = [torch.randn(2, x, img_sz, img_sz) for x in x_list]

W = torch.randn(output_ch, sum(x_list), 3, 3)
bias = torch.randn(output_ch)

cconv = CatConv2d(sum(x_list), output_ch, (3, 3), relu=False)
cconv.weight[:,:,:,:] = W[:,:,:,:]  # [inplace]
cconv.bias[:] = bias[:]

conv = nn.Conv2d(sum(x_list), output_ch, kernel_size=3, stride=1, bias=True, padding=1)
conv.weight[:,:,:,:] = W[:,:,:,:]
conv.bias[:] = bias[:]

out = cconv(X_list)
out2 = conv(torch.cat(X_list, 1))
print("top 10 difference:", torch.topk((abs(out - out2)).flatten(), 10)[0])
