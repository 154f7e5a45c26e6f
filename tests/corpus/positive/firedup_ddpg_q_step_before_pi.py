# Source: https://github.com/kashif/firedup/issues/11
# Report: Fired Up's DDPG (a PyTorch port of Spinning Up) computes the policy loss
#   -Q(s, pi(s)) and the Q loss from one forward pass, then updates Q first and the policy
#   second: pi_loss.backward() runs through the Q network, whose weights q_optimizer.step()
#   has just changed ("[torch.FloatTensor [300, 1]], which is output 0 of TBackward, is at
#   version 2; expected version 1"). The reporter reordered the two updates; the maintainer
#   fixed it in the repository.
# In-place op: line 59 (`q_optimizer.step()`).
# Saved by: line 50 (`q_pi = main.q(o, pi)`: Q's Linear layers keep their weights for
#   pi_loss's backward).
# Fix: fixed/firedup_ddpg_q_step_before_pi.py, the reordering the reporter made and the
#   repository adopted: the policy is updated before Q is.
# Shrunk: the actor-critic reduced to two small MLPs (Spinning Up's hidden sizes 400/300
#   shrunk), one update on a random batch, no target networks' Polyak averaging.
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
pi, q, q_pi = main(o, a)  # [saves]
with torch.no_grad():
    pi_targ = target.policy(o2)
    backup = r + gamma * (1 - d) * target.q(o2, pi_targ)
pi_loss = -q_pi.mean()
q_loss = ((q - backup) ** 2).mean()

q_optimizer.zero_grad()
q_loss.backward()
q_optimizer.step()  # [inplace]

pi_optimizer.zero_grad()
pi_loss.backward()
pi_optimizer.step()
print("q_loss", q_loss.item(), "pi_loss", pi_loss.item())
