# Source: https://github.com/lucabergamini/VAEGAN-PYTORCH/issues/5
# Report: VAEGAN-PYTORCH's main.py fails at `loss_decoder.backward(retain_graph=True)` with
#   "... [torch.cuda.FloatTensor [1024, 128]], which is output 0 of AsStridedBackward0, is
#   at version 3; expected version 2". The script has one optimizer per sub-network and runs
#   backward, step, backward, step, ... on one graph: optimizer_encoder.step() updates the
#   encoder's weights, and the decoder's loss (its feature-matching term goes through the
#   reconstruction, so through the encoder) is then backpropagated through them. The thread
#   only suggests an older torch.
# In-place op: line 117 (`optimizer_encoder.step()`).
# Saved by: line 35 (the encoder's `self.l_mu(ten)` and `self.l_var(ten)` keep their weights
#   for backward).
# Fix: fixed/vaegan_decoder_loss_after_encoder_step.py, the usual fix (the thread has none):
#   each loss is backpropagated into its own network's parameters (`inputs=`) before any
#   optimizer steps.
# Shrunk: encoder, decoder and discriminator as small MLPs on random 32-d "images"; the
#   loss of VaeGan.loss as the script combines it; one batch; the switches that skip the
#   decoder's or the discriminator's update when they are unbalanced and the logging left out.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import RMSprop

torch.manual_seed(2)


class Encoder(nn.Module):
    def __init__(self, z_size=8):
        super().__init__()
        self.conv = nn.Sequential(nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(True))
        self.fc = nn.Sequential(nn.Linear(64, 32), nn.BatchNorm1d(32), nn.ReLU(True))
        self.l_mu, self.l_var = nn.Linear(32, z_size), nn.Linear(32, z_size)

    def forward(self, ten):
        ten = self.fc(self.conv(ten))
        return self.l_mu(ten), self.l_var(ten)  # [saves]


class Decoder(nn.Module):
    def __init__(self, z_size=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_size, 64), nn.BatchNorm1d(64), nn.ReLU(True),
                                 nn.Linear(64, 32), nn.Tanh())

    def forward(self, ten):
        return self.net(ten)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Sequential(nn.Linear(32, 48), nn.ReLU(True))
        self.last = nn.Sequential(nn.Linear(48, 16), nn.ReLU(True), nn.Linear(16, 1), nn.Sigmoid())

    def forward(self, ten, other_ten, mode="REC"):
        ten = torch.cat((ten, other_ten), 0)
        if mode == "REC":
            return self.layer(ten)
        return self.last(self.layer(ten))


class VaeGan(nn.Module):
    def __init__(self, z_size=8):
        super().__init__()
        self.z_size = z_size
        self.encoder, self.decoder = Encoder(z_size), Decoder(z_size)
        self.discriminator = Discriminator()

    def forward(self, ten):
        ten_original = ten
        mus, log_variances = self.encoder(ten)
        variances = torch.exp(log_variances * 0.5)
        ten_from_normal = torch.randn(len(ten), self.z_size)
        ten = ten_from_normal * variances + mus
        ten = self.decoder(ten)
        ten_from_normal = torch.randn(len(ten), self.z_size)
        ten_from_normal = self.decoder(ten_from_normal)
        ten_layer = self.discriminator(ten_original, ten, "REC")
        ten_class = self.discriminator(torch.cat((ten_original, ten), 0), ten_from_normal, "GAN")
        return ten, ten_class, ten_layer, mus, log_variances

    @staticmethod
    def loss(ten_original, ten_predict, layer_original, layer_predicted, labels_original,
             labels_predicted, labels_sampled, mus, variances):
        nle = 0.5 * (ten_original.view(len(ten_original), -1) - ten_predict.view(len(ten_predict), -1)) ** 2
        kl = -0.5 * torch.sum(-variances.exp() - torch.pow(mus, 2) + variances + 1, 1)
        mse = torch.sum(0.5 * (layer_original - layer_predicted) ** 2, 1)
        bce_dis_original = -torch.log(labels_original + 1e-3)
        bce_dis_predicted = -torch.log(1 - labels_predicted + 1e-3)
        bce_dis_sampled = -torch.log(1 - labels_sampled + 1e-3)
        return (torch.sum(nle), torch.sum(kl), torch.sum(mse), torch.sum(bce_dis_original),
                torch.sum(bce_dis_predicted), torch.sum(bce_dis_sampled))


net = VaeGan()
optimizer_encoder = RMSprop(params=net.encoder.parameters(), lr=0.0001)
optimizer_decoder = RMSprop(params=net.decoder.parameters(), lr=0.0001)
optimizer_discriminator = RMSprop(params=net.discriminator.parameters(), lr=0.0001)

net.train()
data_batch = torch.rand(16, 32) * 2 - 1
out, out_labels, out_layer, mus, variances = net(data_batch)
out_layer_original = out_layer[:len(out_layer) // 2]
out_layer_predicted = out_layer[len(out_layer) // 2:]
out_labels_original = out_labels[:len(out_labels) // 3]
out_labels_predicted = out_labels[len(out_labels) // 3:(len(out_labels) // 3) * 2]
out_labels_sampled = out_labels[-len(out_labels) // 3:]
nle_value, kl_value, mse_value, bce_dis_original_value, bce_dis_predicted_value, \
    bce_dis_sampled_value = VaeGan.loss(data_batch, out, out_layer_original, out_layer_predicted,
                                        out_labels_original, out_labels_predicted,
                                        out_labels_sampled, mus, variances)
loss_encoder = kl_value + mse_value
loss_decoder = 1e-06 * mse_value - (bce_dis_original_value + bce_dis_sampled_value)
loss_discriminator = bce_dis_original_value + bce_dis_sampled_value

net.zero_grad()
loss_encoder.backward(retain_graph=True)
optimizer_encoder.step()  # [inplace]
net.zero_grad()
loss_decoder.backward(retain_graph=True)
optimizer_decoder.step()
net.discriminator.zero_grad()
loss_discriminator.backward()
optimizer_discriminator.step()
print("losses", loss_encoder.item(), loss_decoder.item(), loss_discriminator.item())
