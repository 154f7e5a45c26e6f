# Fixed version of positive/firedup_ddpg_q_step_before_pi.py.
# Source: https://github.com/kashif/firedup/issues/11 (the reporter's reordering; fixed in the
#   repository).
# Fix: the policy is updated first, while Q's weights are still those its loss saw; Q is
#   updated after (its own loss does not go through the policy).
import torch
import torch.nn as nn

torch.manual_seed(0)
obs_dim, act_dim, gamma = 11, 3, 0.99


def mlp(sizes, out_act=nn.Identity):
    layers = []
    for i in range(len(sizes) - 1):
        act = nn.ReLU if i < len(sizes) - 2 else out_act
        layers += [nn.Linear(sizes[i], sizes[i + 1]), act()]
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.policy = mlp([obs_dim, 40, 30, act_dim], nn.Tanh)
        self.q_net = mlp([obs_dim + act_dim, 40, 30, 1])

    def q(self, o, a):
        return self.q_net(torch.cat([o, a], dim=1)).squeeze(1)

    def forward(self, o, a):
        pi = self.policy(o)
        return pi, self.q(o, a), self.q(o, pi)


main, target = ActorCritic(), ActorCritic()
pi_optimizer = torch.optim.Adam(main.policy.parameters(), lr=1e-3)
q_optimizer = torch.optim.Adam(main.q_net.parameters(), lr=1e-3)

o, o2 = torch.randn(64, obs_dim), torch.randn(64, obs_dim)
a, r, d = torch.rand(64, act_dim) * 2 - 1, torch.randn(64), torch.zeros(64)
pi, q, q_pi = main(o, a)
with torch.no_grad():
    pi_targ = target.policy(o2)
    backup = r + gamma * (1 - d) * target.q(o2, pi_targ)
pi_loss = -q_pi.mean()
q_loss = ((q - backup) ** 2).mean()

pi_optimizer.zero_grad()
pi_loss.backward()
pi_optimizer.step()  # [fix]

q_optimizer.zero_grad()
q_loss.backward()
q_optimizer.step()
print("q_loss", q_loss.item(), "pi_loss", pi_loss.item())
