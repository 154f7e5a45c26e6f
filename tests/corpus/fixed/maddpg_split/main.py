# Fixed version of positive/maddpg_split/main.py.
# Source: https://github.com/starry-sky6688/MADDPG/issues/27
# Fix: in maddpg/maddpg.py the critic is still updated first, but right after its loss,
#   before the actor loss is computed through it (the maintainer's suggestion: move the
#   critic's update up to there), so actor_loss.backward() goes through the critic's
#   current weights. The other files are unchanged.
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
