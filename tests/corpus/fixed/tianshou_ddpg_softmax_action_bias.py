# Fixed version of positive/tianshou_ddpg_softmax_action_bias.py.
# Source: https://github.com/thu-ml/tianshou/issues/29 (the usual fix).
# Fix: the action bias and the noise make new tensors; the softmax output the actor's
#   backward needs is not written.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
state_dim, action_dim = 6, 3


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(state_dim, 32), nn.ReLU(), nn.Linear(32, action_dim))

    def forward(self, s, state=None, info=None):
        return F.softmax(self.model(s), dim=-1), None


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(state_dim + action_dim, 32), nn.ReLU(),
                                   nn.Linear(32, 1))

    def forward(self, s, a):
        return self.model(torch.cat([s, a], dim=1))


class DDPGPolicy:
    def __init__(self, actor, actor_optim, critic, action_range=(0.0, 1.0), exploration_noise=0.1):
        self.actor, self.actor_optim, self.critic = actor, actor_optim, critic
        self._range = action_range
        self._action_bias = (action_range[0] + action_range[1]) / 2
        self._eps = exploration_noise

    def __call__(self, obs, eps=None):
        logits, h = self.actor(obs)
        logits = logits + self._action_bias  # [fix]
        eps = self._eps if eps is None else eps
        if eps > 0:
            logits = logits + torch.randn(size=logits.shape) * eps
        return logits.clamp(self._range[0], self._range[1])

    def learn(self, obs):
        actor_loss = -self.critic(obs, self(obs, eps=0)).mean()
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
        return actor_loss.item()


actor = Actor()
policy = DDPGPolicy(actor, torch.optim.Adam(actor.parameters(), lr=1e-3), Critic())
print("actor loss", policy.learn(torch.randn(16, state_dim)))
