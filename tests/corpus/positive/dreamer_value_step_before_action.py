# Source: https://github.com/cross32768/Dreamer_PyTorch/issues/2
# Report: "Bug happened during the update of action model": train.py backpropagates the
#   value loss with retain_graph=True, calls value_optimizer.step(), then runs
#   action_loss.backward() through the same imagined trajectory, whose lambda targets came
#   out of value_model: "[torch.FloatTensor [400, 1]], which is output 0 of
#   AsStridedBackward0, is at version 2; expected version 1". A commenter made it work by
#   reordering the backward and step calls.
# In-place op: line 102 (`value_optimizer.step()` rewrites value_model's weights).
# Saved by: line 93 (`value_model(...)`: its Linear layers keep their weights for the
#   action loss, which goes back through imaginated_values).
# Fix: fixed/dreamer_value_step_before_action.py: the commenter's reordering, both
#   backward passes before either step.
# Shrunk: the world model is a GRU cell with a Gaussian prior, hidden sizes 16/32, a
#   horizon of 4, one update on random start states; model learning and the environment
#   are left out.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal
from torch.nn.functional import mse_loss
from torch.nn.utils import clip_grad_norm_

torch.manual_seed(0)
state_dim, rnn_hidden_dim, action_dim, horizon, batch = 8, 16, 2, 4, 6
gamma, lambda_, clip = 0.9, 0.95, 100


def lambda_target(rewards, values, gamma, lambda_):
    V_lambda = torch.zeros_like(rewards, device=rewards.device)
    H = rewards.shape[0] - 1
    V_n = torch.zeros_like(rewards, device=rewards.device)
    V_n[H] = values[H]
    for n in range(1, H + 1):
        V_n[:-n] = (gamma ** n) * values[n:]
        for k in range(1, n + 1):
            if k == n:
                V_n[:-n] += (gamma ** (n - 1)) * rewards[k:]
            else:
                V_n[:-n] += (gamma ** (k - 1)) * rewards[k:-n + k]
        if n == H:
            V_lambda += (lambda_ ** (H - 1)) * V_n
        else:
            V_lambda += (1 - lambda_) * (lambda_ ** (n - 1)) * V_n
    return V_lambda


class MLPHead(nn.Module):  # RewardModel / ValueModel / ActionModel, one hidden layer
    def __init__(self, out_dim, hidden_dim=32, act=F.elu):
        super().__init__()
        self.fc1 = nn.Linear(state_dim + rnn_hidden_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, out_dim)
        self.act = act

    def forward(self, state, rnn_hidden):
        return self.fc2(self.act(self.fc1(torch.cat([state, rnn_hidden], dim=1))))


class RSSM(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRUCell(state_dim + action_dim, rnn_hidden_dim)
        self.fc_prior = nn.Linear(rnn_hidden_dim, 2 * state_dim)

    def prior(self, state, action, rnn_hidden):
        rnn_hidden = self.rnn(torch.cat([state, action], dim=1), rnn_hidden)
        mean, std = self.fc_prior(rnn_hidden).chunk(2, dim=1)
        return Normal(mean, F.softplus(std) + 0.1), rnn_hidden


rssm, reward_model = RSSM(), MLPHead(1)
value_model, action_model = MLPHead(1), MLPHead(action_dim, act=F.elu)
value_optimizer = torch.optim.Adam(value_model.parameters(), lr=8e-5)
action_optimizer = torch.optim.Adam(action_model.parameters(), lr=8e-5)

flatten_states = torch.randn(batch, state_dim).detach()
flatten_rnn_hiddens = torch.randn(batch, rnn_hidden_dim).detach()
imaginated_states = torch.zeros(horizon + 1, *flatten_states.shape)
imaginated_rnn_hiddens = torch.zeros(horizon + 1, *flatten_rnn_hiddens.shape)
imaginated_states[0] = flatten_states
imaginated_rnn_hiddens[0] = flatten_rnn_hiddens
for h in range(1, horizon + 1):
    actions = torch.tanh(action_model(flatten_states, flatten_rnn_hiddens))
    flatten_states_prior, flatten_rnn_hiddens = rssm.prior(flatten_states, actions,
                                                           flatten_rnn_hiddens)
    flatten_states = flatten_states_prior.rsample()
    imaginated_states[h] = flatten_states
    imaginated_rnn_hiddens[h] = flatten_rnn_hiddens

flatten_imaginated_states = imaginated_states.view(-1, state_dim)
flatten_imaginated_rnn_hiddens = imaginated_rnn_hiddens.view(-1, rnn_hidden_dim)
imaginated_rewards = reward_model(flatten_imaginated_states,
                                  flatten_imaginated_rnn_hiddens).view(horizon + 1, -1)
imaginated_values = value_model(flatten_imaginated_states,  # [saves]
                                flatten_imaginated_rnn_hiddens).view(horizon + 1, -1)
lambda_target_values = lambda_target(imaginated_rewards, imaginated_values, gamma, lambda_)

# update_value model
value_loss = 0.5 * mse_loss(imaginated_values, lambda_target_values.detach())
value_optimizer.zero_grad()
value_loss.backward(retain_graph=True)
clip_grad_norm_(value_model.parameters(), clip)
value_optimizer.step()  # [inplace]

# update action model (multiply -1 for gradient ascent)
action_loss = -1 * (lambda_target_values.mean())
action_optimizer.zero_grad()
action_loss.backward()
clip_grad_norm_(action_model.parameters(), clip)
action_optimizer.step()
print("value loss", value_loss.item(), "action loss", action_loss.item())
