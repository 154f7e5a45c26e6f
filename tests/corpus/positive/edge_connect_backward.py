# Source: https://github.com/knazeri/edge-connect/issues/188
# Report: training EdgeConnect fails in backward with "[1, 512, 4, 4] is at version ...".
#   The model's backward() (src/models.py) calls dis_loss.backward() and
#   self.dis_optimizer.step() before gen_loss.backward(); the generator's adversarial loss
#   went through the discriminator, whose weights that step has just changed. The answer
#   in the thread: "The backward() should be before optimizer.step()".
# In-place op: line 83 (`self.dis_optimizer.step()`).
# Saved by: line 75 (`self.discriminator(gen_input_fake)`: the discriminator's
#   convolutions keep their weights for gen_loss).
# Fix: fixed/edge_connect_backward.py, the change posted in the thread: both backward
#   calls before both optimizer steps.
# Shrunk: tiny generator/discriminator, one iteration, adversarial + L1 losses only.
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class EdgeGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(True))
        self.decoder = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        return torch.sigmoid(self.decoder(self.encoder(x)))


class Discriminator(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(in_channels, 8, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True))
        self.conv2 = nn.Sequential(nn.Conv2d(8, 16, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True))
        self.conv3 = nn.Conv2d(16, 1, 3, 1, 1)

    def forward(self, x):
        conv1 = self.conv1(x)
        conv2 = self.conv2(conv1)
        outputs = torch.sigmoid(self.conv3(conv2))
        return outputs, [conv1, conv2]


class EdgeModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.generator = EdgeGenerator()
        self.discriminator = Discriminator(in_channels=2)
        self.l1_loss = nn.L1Loss()
        self.adversarial_loss = nn.BCELoss()
        self.gen_optimizer = optim.Adam(self.generator.parameters(), lr=1e-4)
        self.dis_optimizer = optim.Adam(self.discriminator.parameters(), lr=1e-5)

    def forward(self, images, edges, masks):
        edges_masked = edges * (1 - masks)
        images_masked = images * (1 - masks) + masks
        inputs = torch.cat((images_masked, edges_masked, masks), dim=1)
        return self.generator(inputs)

    def process(self, images, edges, masks):
        self.gen_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()
        outputs = self(images, edges, masks)

        # discriminator loss
        dis_input_real = torch.cat((images, edges), dim=1)
        dis_input_fake = torch.cat((images, outputs.detach()), dim=1)
        dis_real, dis_real_feat = self.discriminator(dis_input_real)
        dis_fake, dis_fake_feat = self.discriminator(dis_input_fake)
        dis_loss = (self.adversarial_loss(dis_real, torch.ones_like(dis_real)) +
                    self.adversarial_loss(dis_fake, torch.zeros_like(dis_fake))) / 2

        # generator adversarial loss
        gen_input_fake = torch.cat((images, outputs), dim=1)
        gen_fake, gen_fake_feat = self.discriminator(gen_input_fake)  # [saves]
        gen_loss = self.adversarial_loss(gen_fake, torch.ones_like(gen_fake))
        gen_loss = gen_loss + self.l1_loss(outputs, edges)
        return outputs, gen_loss, dis_loss

    def backward(self, gen_loss=None, dis_loss=None):
        if dis_loss is not None:
            dis_loss.backward()
        self.dis_optimizer.step()  # [inplace]

        if gen_loss is not None:
            gen_loss.backward()
        self.gen_optimizer.step()


model = EdgeModel()
images = torch.rand(2, 1, 16, 16)
edges = (torch.rand(2, 1, 16, 16) > 0.8).float()
masks = (torch.rand(2, 1, 16, 16) > 0.5).float()
outputs, gen_loss, dis_loss = model.process(images, edges, masks)
model.backward(gen_loss, dis_loss)
print("gen_loss", gen_loss.item(), "dis_loss", dis_loss.item())
