# Mirrors: vwxyzjn/cleanrl, cleanrl/ddpg_continuous_action.py (the update step: the critic
#   is trained on a target computed under no_grad, q_optimizer.step(), then the actor loss
#   is computed afresh from qf1(obs, actor(obs)) and the actor is stepped; the target
#   networks follow by a Polyak update of .data).
# Safe in-place ops: the actor's loss is built after the critic's step, so its backward sees
#   the critic's current weights; the target networks' in-place updates touch tensors no
#   graph saved.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
obs_dim, act_dim, gamma, tau = 8, 2, 0.99, 0.005


class QNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim + act_dim, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 1)

    def forward(self, x, a):
        x = torch.cat([x, a], 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, 32)
        self.fc_mu = nn.Linear(32, act_dim)

    def forward(self, x):
        return torch.tanh(self.fc_mu(F.relu(self.fc1(x))))


actor, qf1 = Actor(), QNetwork()
target_actor, qf1_target = Actor(), QNetwork()
target_actor.load_state_dict(actor.state_dict())
qf1_target.load_state_dict(qf1.state_dict())
q_optimizer = torch.optim.Adam(qf1.parameters(), lr=3e-4)
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=3e-4)

for global_step in range(3):
    obs, next_obs = torch.randn(32, obs_dim), torch.randn(32, obs_dim)
    actions, rewards, dones = torch.rand(32, act_dim) * 2 - 1, torch.randn(32), torch.zeros(32)
    with torch.no_grad():
        next_state_actions = target_actor(next_obs)
        qf1_next_target = qf1_target(next_obs, next_state_actions)
        next_q_value = rewards + (1 - dones) * gamma * qf1_next_target.view(-1)
    qf1_a_values = qf1(obs, actions).view(-1)
    qf1_loss = F.mse_loss(qf1_a_values, next_q_value)
    q_optimizer.zero_grad()
    qf1_loss.backward()
    q_optimizer.step()

    actor_loss = -qf1(obs, actor(obs)).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()

    for param, target_param in zip(actor.parameters(), target_actor.parameters()):
        target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
    for param, target_param in zip(qf1.parameters(), qf1_target.parameters()):
        target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
print("actor loss", actor_loss.item())
