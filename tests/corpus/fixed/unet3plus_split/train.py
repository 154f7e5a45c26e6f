# Fixed version of positive/unet3plus_split/train.py.
# Source: seeds/unet3plus_inplace_relu.txt (a Stack Exchange question by Big-Yellow-J,
#   as quoted), in the layout of the UNet 3+ repository (ZJUGiveLab/UNet-Version).
# Fix: the only change is in models/UNet_3Plus.py, the cls branch (same line number):
#   nn.Dropout(p=0.5, inplace=True) -> nn.Dropout(p=0.5). Out of place, the dropout
#   leaves hd5 alone, whose values the ReLU that ends unetConv2 saved. Every
#   ReLU(inplace=True) of unetConv2 and of the decoder is kept: each follows a BatchNorm,
#   whose backward does not need its output (the accepted answer removed them all).
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
