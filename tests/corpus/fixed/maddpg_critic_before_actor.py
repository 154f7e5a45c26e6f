# Fixed version of positive/maddpg_critic_before_actor.py.
# Source: https://github.com/starry-sky6688/MADDPG/issues/27
# Fix: the critic is still updated first, but the actor loss is computed after
#   critic_optim.step(), so its backward goes through the critic's current weights (the
#   maintainer's explanation: the actor loss was stale once the critic had changed).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Args:
    n_agents = 2
    obs_shape = [6, 6]
    action_shape = [2, 2]
    lr_actor = 1e-3
    lr_critic = 1e-3
    gamma = 0.95
    high_action = 1.0


class Actor(nn.Module):
    def __init__(self, args, agent_id):
        super().__init__()
        self.max_action = args.high_action
        self.fc1 = nn.Linear(args.obs_shape[agent_id], 32)
        self.fc2 = nn.Linear(32, 32)
        self.action_out = nn.Linear(32, args.action_shape[agent_id])

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.max_action * torch.tanh(self.action_out(x))


class Critic(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.max_action = args.high_action
        self.fc1 = nn.Linear(sum(args.obs_shape) + sum(args.action_shape), 32)
        self.fc2 = nn.Linear(32, 32)
        self.q_out = nn.Linear(32, 1)

    def forward(self, state, action):
        state = torch.cat(state, dim=1)
        action = torch.cat([a / self.max_action for a in action], dim=1)
        x = torch.cat([state, action], dim=1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.q_out(x)


class MADDPG:
    def __init__(self, args, agent_id):
        self.args = args
        self.agent_id = agent_id
        self.actor_network = Actor(args, agent_id)
        self.critic_network = Critic(args)
        self.critic_target_network = Critic(args)
        self.critic_target_network.load_state_dict(self.critic_network.state_dict())
        self.actor_optim = torch.optim.Adam(self.actor_network.parameters(), lr=args.lr_actor)
        self.critic_optim = torch.optim.Adam(self.critic_network.parameters(), lr=args.lr_critic)

    def train(self, transitions):
        r = transitions['r_%d' % self.agent_id]
        o, u, o_next, u_next = [], [], [], []
        for agent_id in range(self.args.n_agents):
            o.append(transitions['o_%d' % agent_id])
            u.append(transitions['u_%d' % agent_id])
            o_next.append(transitions['o_next_%d' % agent_id])
            u_next.append(transitions['u_next_%d' % agent_id])

        with torch.no_grad():
            q_next = self.critic_target_network(o_next, u_next).detach()
            target_q = (r.unsqueeze(1) + self.args.gamma * q_next).detach()

        # the q loss
        q_value = self.critic_network(o, u)
        critic_loss = (target_q - q_value).pow(2).mean()

        # update the network: critic first, as in the paper
        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()

        # the actor loss, computed through the critic as it is now  # [fix]
        u[self.agent_id] = self.actor_network(o[self.agent_id])
        actor_loss = - self.critic_network(o, u).mean()  # [fix]

        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
        return critic_loss.item(), actor_loss.item()


def sample(args, batch=16):
    t = {}
    for i in range(args.n_agents):
        t['o_%d' % i] = torch.randn(batch, args.obs_shape[i])
        t['u_%d' % i] = torch.rand(batch, args.action_shape[i]) * 2 - 1
        t['o_next_%d' % i] = torch.randn(batch, args.obs_shape[i])
        t['u_next_%d' % i] = torch.rand(batch, args.action_shape[i]) * 2 - 1
        t['r_%d' % i] = torch.randn(batch)
    return t


args = Args()
policy = MADDPG(args, agent_id=0)
print(policy.train(sample(args)))
