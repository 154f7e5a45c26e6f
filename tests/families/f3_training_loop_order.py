"""Family 3 of issue 16: parameters updated in place (``optimizer.step()``, ``p.data -=``,
``load_state_dict``, ``copy_`` into a weight) between the forward that saved them and a
later ``backward()`` through that graph: a discriminator step before the generator's
backward, actor/critic updates, ``retain_graph=True`` loops, a hidden state carried across
iterations; also when the step happens inside a helper.

The smallest real code that triggers it (INVALID, marked ``# expect: GG004``, or GG001 for
a carried hidden state) and the closest code that must not (VALID); tests/test_families.py
runs each statically and under torch. Cases GradGuard does not get right yet are
``missed`` (a strict xfail).
"""

from tests.rulecases import case

FAMILY = "3"

INVALID = [
    case("F3: the critic's step before the actor's backward through the critic "
         "(tqc, maddpg)", """
        import torch
        import torch.nn as nn

        actor = nn.Linear(3, 2)
        critic = nn.Linear(5, 1)
        critic_opt = torch.optim.SGD(critic.parameters(), lr=0.1)
        state = torch.randn(4, 3)
        new_action = actor(state)
        critic_loss = critic(torch.cat([state, new_action.detach()], 1)).pow(2).mean()
        actor_loss = -critic(torch.cat([state, new_action], 1)).mean()
        critic_opt.zero_grad()
        critic_loss.backward()
        critic_opt.step()  # expect: GG004
        actor_loss.backward()
    """),
    case("F3: the step inside a helper method, between two backwards (dreamer)", """
        import torch
        import torch.nn as nn

        class Agent:
            def __init__(self):
                self.value = nn.Linear(4, 1)
                self.value_opt = torch.optim.SGD(self.value.parameters(), lr=0.1)

            def update_value(self, loss):
                self.value_opt.zero_grad()
                loss.backward(retain_graph=True)
                self.value_opt.step()  # expect: GG004

        agent = Agent()
        imagined = torch.randn(5, 4, requires_grad=True)
        returns = agent.value(imagined)
        agent.update_value(returns.pow(2).mean())
        (-returns.mean()).backward()
    """),
    case("F3: a hidden state carried across the steps of a loop nested in two more "
         "(each step's write breaks what the step before saved)", """
        import os

        import torch
        import torch.nn as nn

        cell = nn.Linear(4, 4)
        epochs = int(os.environ.get("EPOCHS", "2"))
        steps = int(os.environ.get("STEPS", "3"))
        for epoch in range(epochs):
            for batch in range(epochs + 1):
                x = torch.randn(2, 4)
                hidden = torch.zeros(2, 4)
                total = 0
                for step in range(steps):
                    hidden.add_(cell(x))  # expect: GG001
                    total = total + torch.sin(hidden).sum()
                total.backward()
    """),
]

VALID = [
    case("F3: the actor's backward before the critic's step", """
        import torch
        import torch.nn as nn

        actor = nn.Linear(3, 2)
        critic = nn.Linear(5, 1)
        critic_opt = torch.optim.SGD(critic.parameters(), lr=0.1)
        state = torch.randn(4, 3)
        new_action = actor(state)
        critic_loss = critic(torch.cat([state, new_action.detach()], 1)).pow(2).mean()
        actor_loss = -critic(torch.cat([state, new_action], 1)).mean()
        critic_opt.zero_grad()
        critic_loss.backward(retain_graph=True)
        actor_loss.backward()
        critic_opt.step()
    """),
    case("F3: a hidden state carried out of place across the steps of a nested loop", """
        import os

        import torch
        import torch.nn as nn

        cell = nn.Linear(4, 4)
        epochs = int(os.environ.get("EPOCHS", "2"))
        steps = int(os.environ.get("STEPS", "3"))
        for epoch in range(epochs):
            for batch in range(epochs + 1):
                x = torch.randn(2, 4)
                hidden = torch.zeros(2, 4)
                total = 0
                for step in range(steps):
                    hidden = hidden + cell(x)
                    total = total + torch.sin(hidden).sum()
                total.backward()
    """),
]
