# Source: seeds/unet3plus_inplace_relu.txt (a Stack Exchange question by Big-Yellow-J,
#   as quoted), rebuilt in the layout of the UNet 3+ repository (ZJUGiveLab/UNet-Version):
#   models/layers.py (unetConv2: conv, BatchNorm, ReLU(inplace=True)),
#   models/init_weights.py, models/UNet_3Plus.py (the model, with its
#   classification-guided module), and this training step.
# Report: one training step of a UNet3+ fails in loss.backward() with "one of the
#   variables needed for gradient computation has been modified by an inplace operation";
#   the accepted answer removes every inplace=True of the model.
# In-place op: models/UNet_3Plus.py lines 96 (`nn.Dropout(p=0.5, inplace=True)`, the first
#   layer of the cls branch) and 132 (`self.cls(hd5)`, where it runs on the bottom
#   encoder's output).
# Saved by: models/layers.py line 19 (the `nn.ReLU(inplace=True)` that ends each block of
#   unetConv2 saves its output, hd5 for self.conv5, for its backward).
# Fix: fixed/unet3plus_split: only the cls branch's Dropout loses inplace=True; every
#   ReLU(inplace=True) is kept (each follows a BatchNorm, whose backward does not need its
#   output).
# Shrunk: channels / 16, a 64x64 input, the decoder's full-scale skips grouped as the
#   reporter's Decoder blocks, a single output (no deep supervision), random data, one step.
import torch
import torch.nn as nn

from models.UNet_3Plus import UNet_3Plus


def main():
    torch.manual_seed(0)
    model = UNet_3Plus(in_channels=3, n_classes=2)
    loss_fc = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    in_data = torch.randn(2, 3, 64, 64)
    out_data = torch.rand(2, 2, 64, 64)

    model.train()
    pred_data = model(in_data)
    optimizer.zero_grad()
    loss = loss_fc(pred_data, out_data)
    loss.backward()
    optimizer.step()
    print(f"loss {loss.item():.4f}: backward ran")


if __name__ == "__main__":
    main()
