import torch


class RandomEnv:
    """Stands in for the multiagent particle environment: random observations and rewards."""

    def __init__(self, n, obs_dim, action_dim):
        self.n = n
        self.obs_dim = obs_dim
        self.action_dim = action_dim

    def reset(self):
        return [torch.randn(self.obs_dim) for _ in range(self.n)]

    def step(self, actions):
        s_next = [torch.randn(self.obs_dim) for _ in range(self.n)]
        r = [float(torch.randn(())) for _ in range(self.n)]
        done = [False] * self.n
        return s_next, r, done, {}


def make_env(args):
    env = RandomEnv(n=3, obs_dim=8, action_dim=5)
    args.n_players = env.n
    args.n_agents = env.n - 1  # the good agent is not trained
    args.obs_shape = [env.obs_dim for i in range(args.n_agents)]
    args.action_shape = [env.action_dim for i in range(args.n_agents)]
    args.high_action = 1
    args.low_action = -1
    return env, args
