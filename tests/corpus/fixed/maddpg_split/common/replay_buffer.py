import threading

import torch


class Buffer:
    def __init__(self, args):
        self.size = args.buffer_size
        self.args = args
        # memory management
        self.current_size = 0
        # create the buffer to store info
        self.buffer = dict()
        for i in range(self.args.n_agents):
            self.buffer['o_%d' % i] = [None] * 0
            self.buffer['u_%d' % i] = [None] * 0
            self.buffer['r_%d' % i] = [None] * 0
            self.buffer['o_next_%d' % i] = [None] * 0
        # thread lock
        self.lock = threading.Lock()

    # store the episode
    def store_episode(self, o, u, r, o_next):
        with self.lock:
            for i in range(self.args.n_agents):
                self.buffer['o_%d' % i].append(o[i])
                self.buffer['u_%d' % i].append(u[i])
                self.buffer['r_%d' % i].append(r[i])
                self.buffer['o_next_%d' % i].append(o_next[i])
            self.current_size += 1

    # sample the data from the replay buffer
    def sample(self, batch_size):
        temp_buffer = {}
        idx = torch.randint(0, self.current_size, (batch_size,)).tolist()
        for key in self.buffer.keys():
            temp_buffer[key] = torch.stack([torch.as_tensor(self.buffer[key][j]) for j in idx])
        return temp_buffer
