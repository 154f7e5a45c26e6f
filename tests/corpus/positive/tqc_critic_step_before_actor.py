# Source: https://github.com/SamsungLabs/tqc_pytorch/issues/8
# Report: "Incompatible with PyTorch 2.0 - variable modified inplace": Trainer.train
#   (tqc/trainer.py) builds the critic loss and the actor loss, whose
#   `self.critic(state, new_action)` goes through the critic's Linear layers, then runs
#   critic_loss.backward() and self.critic_optimizer.step() before actor_loss.backward().
#   The step rewrites the critic's weights in place, which the actor loss's graph saved:
#   "[torch.FloatTensor [512, 25]], which is output 0 of AsStridedBackward0, is at
#   version 2; expected version 1", anomaly detection pointing at AddmmBackward0 in the
#   actor-loss line.
# In-place op: line 144 (`self.critic_optimizer.step()`, inside Trainer.train).
# Saved by: line 139 (`self.critic(state, new_action)` in the actor loss).
# Fix: fixed/tqc_critic_step_before_actor.py, the usual one (the issue has no answer):
#   compute the policy loss after the critic update, as SAC implementations do.
# Shrunk: 2 critic nets of 2 hidden layers, 5 quantiles, random transitions instead of a
#   replay buffer and an environment, CPU only.
import torch
from torch import nn
from torch.distributions import Distribution, Normal

torch.manual_seed(0)
DEVICE = torch.device("cpu")
LOG_STD_MIN_MAX = (-20, 2)


class Mlp(nn.Module):
    def __init__(self, input_size, hidden_sizes, output_size):
        super().__init__()
        self.fcs = []
        in_size = input_size
        for i, next_size in enumerate(hidden_sizes):
            fc = nn.Linear(in_size, next_size)
            self.add_module(f"fc{i}", fc)
            self.fcs.append(fc)
            in_size = next_size
        self.last_fc = nn.Linear(in_size, output_size)

    def forward(self, input):
        h = input
        for fc in self.fcs:
            h = torch.relu(fc(h))
        return self.last_fc(h)


class Critic(nn.Module):
    def __init__(self, state_dim, action_dim, n_quantiles, n_nets):
        super().__init__()
        self.nets = []
        self.n_quantiles = n_quantiles
        self.n_nets = n_nets
        for i in range(n_nets):
            net = Mlp(state_dim + action_dim, [32, 32], n_quantiles)
            self.add_module(f"qf{i}", net)
            self.nets.append(net)

    def forward(self, state, action):
        sa = torch.cat((state, action), dim=1)
        return torch.stack(tuple(net(sa) for net in self.nets), dim=1)


class TanhNormal(Distribution):
    arg_constraints = {}

    def __init__(self, normal_mean, normal_std):
        super().__init__(validate_args=False)
        self.normal_mean = normal_mean
        self.normal_std = normal_std
        self.standard_normal = Normal(torch.zeros_like(normal_mean), torch.ones_like(normal_std))
        self.normal = Normal(normal_mean, normal_std)

    def log_prob(self, pre_tanh):
        log_det = 2 * torch.log(torch.tensor(2.0)) + nn.functional.logsigmoid(2 * pre_tanh) \
            + nn.functional.logsigmoid(-2 * pre_tanh)
        return self.normal.log_prob(pre_tanh) - log_det

    def rsample(self):
        pretanh = self.normal_mean + self.normal_std * self.standard_normal.sample()
        return torch.tanh(pretanh), pretanh


class Actor(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.action_dim = action_dim
        self.net = Mlp(state_dim, [32, 32], 2 * action_dim)

    def forward(self, obs):
        mean, log_std = self.net(obs).split([self.action_dim, self.action_dim], dim=1)
        log_std = log_std.clamp(*LOG_STD_MIN_MAX)
        tanh_normal = TanhNormal(mean, torch.exp(log_std))
        action, pre_tanh = tanh_normal.rsample()
        log_prob = tanh_normal.log_prob(pre_tanh).sum(dim=1, keepdim=True)
        return action, log_prob


def quantile_huber_loss_f(quantiles, samples):
    pairwise_delta = samples[:, None, None, :] - quantiles[:, :, :, None]
    abs_pairwise_delta = torch.abs(pairwise_delta)
    huber_loss = torch.where(abs_pairwise_delta > 1, abs_pairwise_delta - 0.5,
                             pairwise_delta ** 2 * 0.5)
    n_quantiles = quantiles.shape[2]
    tau = torch.arange(n_quantiles, device=DEVICE).float() / n_quantiles + 1 / 2 / n_quantiles
    return (torch.abs(tau[None, None, :, None] - (pairwise_delta < 0).float()) * huber_loss).mean()


class Trainer(object):
    def __init__(self, *, actor, critic, critic_target, discount, tau, top_quantiles_to_drop,
                 target_entropy):
        self.actor = actor
        self.critic = critic
        self.critic_target = critic_target
        self.log_alpha = torch.zeros((1,), requires_grad=True, device=DEVICE)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=3e-4)
        self.alpha_optimizer = torch.optim.Adam([self.log_alpha], lr=3e-4)
        self.discount = discount
        self.tau = tau
        self.top_quantiles_to_drop = top_quantiles_to_drop
        self.target_entropy = target_entropy
        self.quantiles_total = critic.n_quantiles * critic.n_nets

    def train(self, batch, batch_size=16):
        state, action, next_state, reward, not_done = batch
        alpha = torch.exp(self.log_alpha)

        # --- Q loss ---
        with torch.no_grad():
            new_next_action, next_log_pi = self.actor(next_state)
            next_z = self.critic_target(next_state, new_next_action)
            sorted_z, _ = torch.sort(next_z.reshape(batch_size, -1))
            sorted_z_part = sorted_z[:, :self.quantiles_total - self.top_quantiles_to_drop]
            target = reward + not_done * self.discount * (sorted_z_part - alpha * next_log_pi)

        cur_z = self.critic(state, action)
        critic_loss = quantile_huber_loss_f(cur_z, target)

        # --- Policy and alpha loss ---
        new_action, log_pi = self.actor(state)
        alpha_loss = -self.log_alpha * (log_pi + self.target_entropy).detach().mean()
        actor_loss = (alpha * log_pi - self.critic(state, new_action).mean(2).mean(1, keepdim=True)).mean()  # [saves]

        # --- Update ---
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()  # [inplace]

        for param, target_param in zip(self.critic.parameters(), self.critic_target.parameters()):
            target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)

        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()

        self.alpha_optimizer.zero_grad()
        alpha_loss.backward()
        self.alpha_optimizer.step()


state_dim, action_dim, batch_size = 6, 2, 16
actor, critic = Actor(state_dim, action_dim), Critic(state_dim, action_dim, 5, 2)
critic_target = Critic(state_dim, action_dim, 5, 2)
critic_target.load_state_dict(critic.state_dict())
trainer = Trainer(actor=actor, critic=critic, critic_target=critic_target, discount=0.99,
                  tau=0.005, top_quantiles_to_drop=2, target_entropy=-action_dim)
batch = (torch.randn(batch_size, state_dim), torch.rand(batch_size, action_dim) * 2 - 1,
         torch.randn(batch_size, state_dim), torch.randn(batch_size, 1), torch.ones(batch_size, 1))
trainer.train(batch, batch_size)
print("trained one step")
