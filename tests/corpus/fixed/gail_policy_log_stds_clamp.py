# Fixed version of positive/gail_policy_log_stds_clamp.py.
# Source: https://github.com/toshikwa/gail-airl-ppo.pytorch/issues/13
# Fix (the reporter's): `log_stds.clamp(-20, 2)`, out of place. The ReLU(inplace=True)
#   hidden activations stay: each follows a Linear.
import math

import torch
from torch import nn

torch.manual_seed(0)


def build_mlp(input_dim, output_dim, hidden_units=(64, 64), hidden_activation=nn.Tanh()):
    layers = []
    units = input_dim
    for next_units in hidden_units:
        layers.append(nn.Linear(units, next_units))
        layers.append(hidden_activation)
        units = next_units
    layers.append(nn.Linear(units, output_dim))
    return nn.Sequential(*layers)


def calculate_log_pi(log_stds, noises, actions):
    gaussian_log_probs = (-0.5 * noises.pow(2) - log_stds).sum(
        dim=-1, keepdim=True) - 0.5 * math.log(2 * math.pi) * log_stds.size(-1)
    return gaussian_log_probs - torch.log(1 - actions.pow(2) + 1e-6).sum(dim=-1, keepdim=True)


def reparameterize(means, log_stds):
    noises = torch.randn_like(means)
    us = means + noises * log_stds.exp()
    actions = torch.tanh(us)
    return actions, calculate_log_pi(log_stds, noises, actions)


class StateDependentPolicy(nn.Module):
    def __init__(self, state_shape, action_shape, hidden_units=(256, 256),
                 hidden_activation=nn.ReLU(inplace=True)):
        super().__init__()
        self.net = build_mlp(
            input_dim=state_shape[0],
            output_dim=2 * action_shape[0],
            hidden_units=hidden_units,
            hidden_activation=hidden_activation
        )

    def forward(self, states):
        return torch.tanh(self.net(states).chunk(2, dim=-1)[0])

    def sample(self, states):
        means, log_stds = self.net(states).chunk(2, dim=-1)
        return reparameterize(means, log_stds.clamp(-20, 2))  # [fix]


actor = StateDependentPolicy(state_shape=(8,), action_shape=(2,), hidden_units=(32, 32))
states = torch.randn(16, 8)
actions, log_pis = actor.sample(states)
loss_actor = (0.2 * log_pis - actions.sum(dim=-1, keepdim=True)).mean()
loss_actor.backward()
print("loss", loss_actor.item())
