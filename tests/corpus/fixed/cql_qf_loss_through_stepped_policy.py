# Fixed version of positive/cql_qf_loss_through_stepped_policy.py.
# Source: https://github.com/aviralkumar2907/CQL/issues/5 (the usual fix, the second option
#   the reporter names).
# Fix: the conservative penalty's actions are sampled without reparameterisation, so the Q
#   losses no longer reach the policy whose weights its optimizer has just changed.
import torch
import torch.nn as nn

torch.manual_seed(0)
obs_dim, act_dim, num_random = 6, 2, 3


class TanhGaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, 2 * act_dim))

    def forward(self, obs, reparameterize=True):
        mean, log_std = self.net(obs).chunk(2, -1)
        dist = torch.distributions.Normal(mean, log_std.clamp(-5, 2).exp())
        pre_tanh = dist.rsample() if reparameterize else dist.sample()
        action = torch.tanh(pre_tanh)
        log_pi = (dist.log_prob(pre_tanh) - torch.log(1 - action.pow(2) + 1e-6)).sum(-1)
        return action, log_pi


def q_net():
    return nn.Sequential(nn.Linear(obs_dim + act_dim, 32), nn.ReLU(), nn.Linear(32, 1))


class CQLTrainer:
    def __init__(self):
        self.policy, self.qf1, self.qf2 = TanhGaussianPolicy(), q_net(), q_net()
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters(), lr=1e-4)
        self.qf1_optimizer = torch.optim.Adam(self.qf1.parameters(), lr=3e-4)
        self.qf2_optimizer = torch.optim.Adam(self.qf2.parameters(), lr=3e-4)
        self.alpha, self.min_q_weight = 0.2, 5.0

    def q(self, qf, obs, act):
        return qf(torch.cat([obs, act], -1)).squeeze(-1)

    def _get_policy_actions(self, obs, num_actions):
        obs_temp = obs.repeat_interleave(num_actions, 0)
        actions, log_pi = self.policy(obs_temp, reparameterize=False)  # [fix]
        return actions, log_pi.view(obs.shape[0], num_actions)

    def train_from_torch(self, obs, actions, rewards, next_obs):
        new_obs_actions, log_pi = self.policy(obs)
        q_new_actions = torch.min(self.q(self.qf1, obs, new_obs_actions),
                                  self.q(self.qf2, obs, new_obs_actions))
        policy_loss = (self.alpha * log_pi - q_new_actions).mean()

        q1_pred, q2_pred = self.q(self.qf1, obs, actions), self.q(self.qf2, obs, actions)
        with torch.no_grad():
            next_actions, _ = self.policy(next_obs)
            q_target = rewards + 0.99 * torch.min(self.q(self.qf1, next_obs, next_actions),
                                                  self.q(self.qf2, next_obs, next_actions))
        curr_actions, _ = self._get_policy_actions(obs, num_random)
        obs_rep = obs.repeat_interleave(num_random, 0)
        q1_curr = self.q(self.qf1, obs_rep, curr_actions).view(obs.shape[0], num_random)
        q2_curr = self.q(self.qf2, obs_rep, curr_actions).view(obs.shape[0], num_random)
        qf1_loss = ((q1_pred - q_target) ** 2).mean() + self.min_q_weight * (
            torch.logsumexp(q1_curr, 1).mean() - q1_pred.mean())
        qf2_loss = ((q2_pred - q_target) ** 2).mean() + self.min_q_weight * (
            torch.logsumexp(q2_curr, 1).mean() - q2_pred.mean())

        self.policy_optimizer.zero_grad()
        policy_loss.backward(retain_graph=False)
        self.policy_optimizer.step()

        self.qf1_optimizer.zero_grad()
        qf1_loss.backward(retain_graph=True)
        self.qf1_optimizer.step()
        self.qf2_optimizer.zero_grad()
        qf2_loss.backward(retain_graph=True)
        self.qf2_optimizer.step()
        return policy_loss.item(), qf1_loss.item()


batch = (torch.randn(16, obs_dim), torch.rand(16, act_dim) * 2 - 1, torch.randn(16),
         torch.randn(16, obs_dim))
print(CQLTrainer().train_from_torch(*batch))
