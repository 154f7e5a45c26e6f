import torch
from maddpg.maddpg import MADDPG


class Agent:
    def __init__(self, agent_id, args):
        self.args = args
        self.agent_id = agent_id
        self.policy = MADDPG(args, agent_id)

    def select_action(self, o, noise_rate, epsilon):
        if torch.rand(()).item() < epsilon:
            u = (torch.rand(self.args.action_shape[self.agent_id]) * 2 - 1) * self.args.high_action
        else:
            inputs = torch.as_tensor(o, dtype=torch.float32).unsqueeze(0)
            with torch.no_grad():
                pi = self.policy.actor_network(inputs).squeeze(0)
            noise = noise_rate * self.args.high_action * torch.randn(pi.shape)  # gaussian noise
            u = torch.clamp(pi + noise, -self.args.high_action, self.args.high_action)
        return u.clone()

    def learn(self, transitions, other_agents):
        return self.policy.train(transitions, other_agents)
