# Fixed version of positive/sac_policy_loss_before_q_update.py.
# Source: https://github.com/toshikwa/soft-actor-critic.pytorch/issues/1 (the reporter's
#   fix, accepted by the maintainer).
# Fix: the policy loss is computed after Q1 and Q2 are updated, so its graph holds their
#   weights as they are when it is backpropagated.
import torch
import torch.nn as nn

torch.manual_seed(0)
S, A = 8, 2


class TwinQ(nn.Module):
    def __init__(self):
        super().__init__()
        self.Q1 = nn.Sequential(nn.Linear(S + A, 32), nn.ReLU(), nn.Linear(32, 1))
        self.Q2 = nn.Sequential(nn.Linear(S + A, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, s, a):
        x = torch.cat([s, a], 1)
        return self.Q1(x), self.Q2(x)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(S, 32), nn.ReLU(), nn.Linear(32, 2 * A))

    def sample(self, s):
        mean, log_std = self.net(s).chunk(2, 1)
        dist = torch.distributions.Normal(mean, log_std.clamp(-20, 2).exp())
        u = dist.rsample()
        action = torch.tanh(u)
        log_prob = (dist.log_prob(u) - torch.log(1 - action.pow(2) + 1e-6)).sum(1, keepdim=True)
        return action, -log_prob


def update_params(optim, loss):
    optim.zero_grad()
    loss.backward()
    optim.step()


class Agent:
    def __init__(self):
        self.critic, self.policy, self.alpha, self.gamma = TwinQ(), Policy(), 0.2, 0.99
        self.q1_optim = torch.optim.Adam(self.critic.Q1.parameters(), lr=3e-4)
        self.q2_optim = torch.optim.Adam(self.critic.Q2.parameters(), lr=3e-4)
        self.policy_optim = torch.optim.Adam(self.policy.parameters(), lr=3e-4)

    def calc_critic_loss(self, s, a, r, s2):
        q1, q2 = self.critic(s, a)
        with torch.no_grad():
            a2, ent2 = self.policy.sample(s2)
            target = r + self.gamma * (torch.min(*self.critic(s2, a2)) + self.alpha * ent2)
        return (q1 - target).pow(2).mean(), (q2 - target).pow(2).mean()

    def calc_policy_loss(self, s):
        sampled_action, entropy = self.policy.sample(s)
        q1, q2 = self.critic(s, sampled_action)
        return (-torch.min(q1, q2) - self.alpha * entropy).mean()

    def learn(self, s, a, r, s2):
        q1_loss, q2_loss = self.calc_critic_loss(s, a, r, s2)
        update_params(self.q1_optim, q1_loss)
        update_params(self.q2_optim, q2_loss)
        policy_loss = self.calc_policy_loss(s)  # [fix]
        update_params(self.policy_optim, policy_loss)
        return q1_loss.item(), policy_loss.item()


batch = (torch.randn(32, S), torch.rand(32, A) * 2 - 1, torch.randn(32, 1), torch.randn(32, S))
print(Agent().learn(*batch))
