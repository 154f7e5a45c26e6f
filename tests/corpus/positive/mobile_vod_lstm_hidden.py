# Source: https://github.com/vikrant7/mobile-vod-bottleneck-lstm/issues/25
# Report: train_mvod_lstm5.py fails with the in-place error in F.conv2d's backward. The
#   training loop steps the optimizer after every frame, with loss.backward(
#   retain_graph=True), but net.detach_hidden() runs only after the whole sequence: the
#   second frame's backward goes through the LSTM state of the first frame, whose graph
#   saved weights that optimizer.step() has changed since. The answer in the thread:
#   detach the hidden state inside the per-frame loop.
# In-place op: line 76 (`optimizer.step()` after each frame).
# Saved by: line 72 (`net(image)`: the conv LSTM's convolution saves its weight in the
#   graph the next frame's hidden state still points to).
# Fix: fixed/mobile_vod_lstm_hidden.py: net.detach_hidden() moved into the frame loop.
# Shrunk: a tiny MobileVOD (one conv, one BottleneckLSTM cell, a 1x1 head), random frames.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BottleneckLSTMCell(nn.Module):
    def __init__(self, input_channels, hidden_channels):
        super().__init__()
        self.hidden_channels = hidden_channels
        self.W = nn.Conv2d(input_channels + hidden_channels, 4 * hidden_channels, 3, padding=1)

    def forward(self, x, h, c):
        gates = self.W(torch.cat((x, h), 1))
        i, f, o, g = gates.chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c


class MobileVOD(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.pred_encoder = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1),
                                          nn.BatchNorm2d(8), nn.ReLU6(inplace=True))
        self.bottleneck_lstm1 = BottleneckLSTMCell(8, 8)
        self.conf = nn.Conv2d(8, num_classes, 1)
        self.loc = nn.Conv2d(8, 4, 1)
        self.hidden_state = None
        self.cell_state = None

    def forward(self, x):
        x = self.pred_encoder(x)
        if self.hidden_state is None:
            self.hidden_state = torch.zeros(x.size(0), 8, x.size(2), x.size(3))
            self.cell_state = torch.zeros_like(self.hidden_state)
        self.hidden_state, self.cell_state = self.bottleneck_lstm1(
            x, self.hidden_state, self.cell_state)
        return self.conf(self.hidden_state), self.loc(self.hidden_state)

    def detach_hidden(self):
        self.hidden_state = self.hidden_state.detach()
        self.cell_state = self.cell_state.detach()


def criterion(confidence, locations, label, box):
    classification_loss = F.cross_entropy(confidence, label)
    regression_loss = F.smooth_l1_loss(locations, box)
    return regression_loss, classification_loss


def train(loader, net, criterion, optimizer):
    net.train(True)
    running_loss = 0.0
    for i, data in enumerate(loader):
        images, boxes, labels = data
        for image, box, label in zip(images, boxes, labels):
            optimizer.zero_grad()
            confidence, locations = net(image)  # [saves]
            regression_loss, classification_loss = criterion(confidence, locations, label, box)
            loss = regression_loss + classification_loss
            loss.backward(retain_graph=True)
            optimizer.step()  # [inplace]
            running_loss += loss.item()
        net.detach_hidden()
    return running_loss


net = MobileVOD()
optimizer = torch.optim.RMSprop(net.parameters(), lr=1e-3, momentum=0.9)
sequence_length = 3
loader = [(torch.randn(sequence_length, 1, 3, 16, 16),
           torch.randn(sequence_length, 1, 4, 8, 8),
           torch.randint(0, 3, (sequence_length, 1, 8, 8)))]
print(train(loader, net, criterion, optimizer))
