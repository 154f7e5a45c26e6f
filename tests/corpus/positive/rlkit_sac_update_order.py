# Source: https://github.com/rail-berkeley/rlkit/pull/109
# Report: "Optimize actor before the critic": with torch 1.5.0 the SAC trainer
#   (rlkit/torch/sac/sac.py) fails, because the critics' weights have already been
#   changed by their optimizers when policy_loss is backpropagated through them.
# In-place op: line 101 (`self.qf1_optimizer.step()`; qf2's step follows).
# Saved by: line 80 (`self.qf1(obs, new_obs_actions)` in the policy loss keeps qf1's weights).
# Fix: fixed/rlkit_sac_update_order.py, the merged pull request: update the policy first.
# Shrunk: small MLPs, a random batch, alpha fixed to 1 (no entropy tuning).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.manual_seed(0)


class ConcatMlp(nn.Module):
    def __init__(self, input_size, output_size, hidden_size=32):
        super().__init__()
        self.fc0 = nn.Linear(input_size, hidden_size)
        self.fc1 = nn.Linear(hidden_size, hidden_size)
        self.last_fc = nn.Linear(hidden_size, output_size)

    def forward(self, *inputs):
        h = torch.cat(inputs, dim=1)
        h = F.relu(self.fc0(h))
        h = F.relu(self.fc1(h))
        return self.last_fc(h)


class TanhNormal:
    def __init__(self, normal_mean, normal_std):
        self.normal = Normal(normal_mean, normal_std)

    def rsample_and_logprob(self, epsilon=1e-6):
        pre_tanh_value = self.normal.rsample()
        value = torch.tanh(pre_tanh_value)
        log_prob = self.normal.log_prob(pre_tanh_value) - torch.log(1 - value.pow(2) + epsilon)
        return value, log_prob.sum(dim=1, keepdim=True)


class TanhGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden_size=32):
        super().__init__()
        self.fc0 = nn.Linear(obs_dim, hidden_size)
        self.last_fc = nn.Linear(hidden_size, action_dim)
        self.last_fc_log_std = nn.Linear(hidden_size, action_dim)

    def forward(self, obs):
        h = F.relu(self.fc0(obs))
        mean = self.last_fc(h)
        log_std = torch.clamp(self.last_fc_log_std(h), -20, 2)
        return TanhNormal(mean, log_std.exp())


class SACTrainer:
    def __init__(self, policy, qf1, qf2, target_qf1, target_qf2, discount=0.99, reward_scale=1.0):
        self.policy = policy
        self.qf1, self.qf2 = qf1, qf2
        self.target_qf1, self.target_qf2 = target_qf1, target_qf2
        self.discount = discount
        self.reward_scale = reward_scale
        self.qf_criterion = nn.MSELoss()
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.qf1_optimizer = torch.optim.Adam(self.qf1.parameters(), lr=3e-4)
        self.qf2_optimizer = torch.optim.Adam(self.qf2.parameters(), lr=3e-4)

    def train_from_torch(self, batch):
        rewards = batch['rewards']
        terminals = batch['terminals']
        obs = batch['observations']
        actions = batch['actions']
        next_obs = batch['next_observations']

        # Policy and Alpha Loss
        dist = self.policy(obs)
        new_obs_actions, log_pi = dist.rsample_and_logprob()
        alpha = 1
        q_new_actions = torch.min(
            self.qf1(obs, new_obs_actions),  # [saves]
            self.qf2(obs, new_obs_actions),
        )
        policy_loss = (alpha * log_pi - q_new_actions).mean()

        # QF Loss
        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        next_dist = self.policy(next_obs)
        new_next_actions, new_log_pi = next_dist.rsample_and_logprob()
        target_q_values = torch.min(
            self.target_qf1(next_obs, new_next_actions),
            self.target_qf2(next_obs, new_next_actions),
        ) - alpha * new_log_pi
        q_target = self.reward_scale * rewards + (1. - terminals) * self.discount * target_q_values
        qf1_loss = self.qf_criterion(q1_pred, q_target.detach())
        qf2_loss = self.qf_criterion(q2_pred, q_target.detach())

        # Update networks
        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()  # [inplace]

        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()

        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()
        return policy_loss.item(), qf1_loss.item()


obs_dim, action_dim = 8, 2
trainer = SACTrainer(
    TanhGaussianPolicy(obs_dim, action_dim),
    ConcatMlp(obs_dim + action_dim, 1), ConcatMlp(obs_dim + action_dim, 1),
    ConcatMlp(obs_dim + action_dim, 1), ConcatMlp(obs_dim + action_dim, 1),
)
batch = {
    'rewards': torch.randn(32, 1),
    'terminals': torch.zeros(32, 1),
    'observations': torch.randn(32, obs_dim),
    'actions': torch.rand(32, action_dim) * 2 - 1,
    'next_observations': torch.randn(32, obs_dim),
}
print(trainer.train_from_torch(batch))
