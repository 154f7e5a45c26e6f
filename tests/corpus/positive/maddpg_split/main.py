# Source: https://github.com/starry-sky6688/MADDPG/issues/27
# Report: in MADDPG.train (maddpg/maddpg.py) the reporter moved the critic update before
#   the actor update, as in the paper; actor_loss.backward() then fails with the in-place
#   error. The maintainer's explanation: actor_loss was computed through critic_network,
#   which critic_optim.step() has since updated in place. The repository's layout: the
#   networks in maddpg/actor_critic.py, the update in maddpg/maddpg.py, the agent in
#   agent.py, the loop in runner.py, this main script.
# In-place op: maddpg/maddpg.py line 71 (`self.critic_optim.step()`).
# Saved by: maddpg/actor_critic.py line 43 (the critic's q_out layer, whose weight the
#   error names; fc1 to fc3 keep theirs too), through `self.critic_network(o, u)` in the
#   actor loss, maddpg/maddpg.py line 66.
# Fix: fixed/maddpg_split: the critic is still updated first, but right after its loss,
#   before the actor loss is computed through it (the maintainer's suggestion: move the
#   critic's update up to there).
# Shrunk: a random stand-in for the particle environment (2 trained agents and one
#   untrained), torch tensors instead of numpy arrays, 12 time steps with a batch of 8,
#   no model saving or evaluation, no tqdm or matplotlib.
import torch

from runner import Runner
from common.arguments import get_args
from common.utils import make_env


if __name__ == '__main__':
    torch.manual_seed(0)
    # get the params
    args = get_args()
    env, args = make_env(args)
    runner = Runner(args, env)
    runner.run()
