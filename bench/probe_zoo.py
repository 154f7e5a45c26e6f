"""The probe zoo: correct training steps on which the probe must find nothing.

    .venv/bin/python -m bench.probe_zoo                 # every case, in the zoo's venv
    .venv/bin/python -m bench.probe_zoo --only gru      # cases whose name contains "gru"
    .venv/bin/python -m bench.probe_zoo --nn-only       # torch.nn cases, this venv's torch
    .venv/bin/python -m bench.probe_zoo --repeat 5      # timing repeats per variant

Each case is a small, correct training step (forward, loss, backward, optimizer step)
of a common building block: every torch.nn module with parameters or an in-place
option, the functional ops users mix in, torchvision classification, detection and
segmentation models and a sample of timm models at small sizes, and the training
patterns around them (autocast, gradient accumulation, checkpointing, torch.compile,
optimizers and schedulers). Each runs backward without error; the probe must report
no error or warning on any of them. A false "your gradients are silently wrong" is the
worst message a user can get.

Two measurements per case:

1. The real probe (``run_probes``, all cases in one child process, two steps each,
   one torch thread): its findings and its wall time per case (building the model
   included, and for the first case of torchvision or timm, importing it).
2. The cost of the instruments on one step, in a process of the zoo's venv with one
   torch thread: the median wall time of a plain step, of the step under the probe's
   hooks (the child's tracker and reporter, installed as the child installs them) and
   under ``torch.autograd.detect_anomaly``, interleaved so that a shared machine's load
   falls on all three alike. Overheads are ratios to the plain step; the summary gives
   their geometric means over the zoo, and the probe's must be no worse than
   detect_anomaly's.

torchvision and timm from the registry need torch's CUDA build (with the local CPU
wheel `import torchvision` fails: `operator torchvision::nms does not exist`), so the
zoo has a venv of its own, made on first use under ~/.cache/gradguard-bench/zoo-venv
(about 5 GB). torch is always pinned: an unpinned torch pulls whatever build the
registry has. The cases that need only torch.nn also run in the test suite
(tests/probe/test_probe_zoo.py), with the project's own venv.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ZOO_VENV = Path.home() / ".cache" / "gradguard-bench" / "zoo-venv"
# Pinned: a bare `torch` pulls a multi-GB build of the registry's choosing.
ZOO_PACKAGES = ("torch==2.13.0", "torchvision==0.28.0", "timm==1.0.31", "numpy")
ENTRY = "probe_step"
PROBE_TIMEOUT = 180.0


@dataclass(frozen=True)
class Case:
    """One correct training step. ``source`` defines ``build()``, which makes the model,
    data and optimizer and returns ``step``, a function running one training step."""

    name: str
    source: str
    needs: str = "nn"  # "nn" (torch only) | "torchvision" | "timm"


HEADER = """\
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
"""

FOOTER = f"""


def {ENTRY}():
    torch.manual_seed(0)
    step = build()
    for _ in range(2):  # a second step meets the optimizer's state and updated weights
        step()
"""


def module_source(case: Case) -> str:
    return HEADER + "\n\n" + textwrap.dedent(case.source).strip("\n") + FOOTER


def _simple(name: str, model: str, make_input: str, loss: str = "out.float().pow(2).mean()",
            optimizer: str = "torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)",
            needs: str = "nn", prelude: str = "") -> Case:
    """A case of the most common shape: a model, an input, a loss of the output."""
    source = f"""
{prelude}
def build():
    model = {model}
    model.train()
    data = {make_input}
    optimizer = {optimizer}

    def step():
        optimizer.zero_grad()
        out = model(data)
        if isinstance(out, (tuple, list)):
            out = out[0]
        loss = {loss}
        loss.backward()
        optimizer.step()

    return step
"""
    return Case(name, source, needs)


def _sequence(name: str, model: str, make_input: str) -> Case:
    return _simple(name, model, make_input, loss="out.pow(2).mean()")


RNN_CASES = [
    _sequence("rnn_tanh", "nn.RNN(8, 16)", "torch.randn(5, 3, 8)"),
    _sequence("rnn_relu_bidirectional_2_layers",
              "nn.RNN(8, 16, num_layers=2, nonlinearity='relu', bidirectional=True, "
              "batch_first=True)", "torch.randn(3, 5, 8)"),
    _sequence("lstm", "nn.LSTM(8, 16)", "torch.randn(5, 3, 8)"),
    _sequence("lstm_bidirectional_2_layers_dropout",
              "nn.LSTM(8, 16, num_layers=2, dropout=0.3, bidirectional=True, "
              "batch_first=True)", "torch.randn(3, 5, 8)"),
    _sequence("lstm_proj_size", "nn.LSTM(8, 16, num_layers=2, proj_size=4)",
              "torch.randn(5, 3, 8)"),
    _sequence("gru", "nn.GRU(8, 16, batch_first=True)", "torch.randn(3, 5, 8)"),
    _sequence("gru_bidirectional_3_layers_dropout",
              "nn.GRU(8, 16, num_layers=3, dropout=0.2, bidirectional=True)",
              "torch.randn(5, 3, 8)"),
    Case("lstm_packed_sequence", """
        from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

        def build():
            lstm = nn.LSTM(8, 16, num_layers=2, bidirectional=True, batch_first=True)
            head = nn.Linear(32, 2)
            params = list(lstm.parameters()) + list(head.parameters())
            optimizer = torch.optim.Adam(params, lr=1e-3)
            data = torch.randn(4, 7, 8)
            lengths = torch.tensor([7, 5, 3, 2])

            def step():
                optimizer.zero_grad()
                packed = pack_padded_sequence(data, lengths, batch_first=True)
                out, (h, c) = lstm(packed)
                padded, _ = pad_packed_sequence(out, batch_first=True)
                loss = head(padded).pow(2).mean() + h.pow(2).mean()
                loss.backward()
                optimizer.step()

            return step
    """),
    Case("gru_packed_unsorted", """
        from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence

        def build():
            gru = nn.GRU(6, 10, bidirectional=True)
            optimizer = torch.optim.SGD(gru.parameters(), lr=0.1)
            sequences = [torch.randn(n, 6) for n in (3, 6, 2, 5)]

            def step():
                optimizer.zero_grad()
                packed = pack_sequence(sequences, enforce_sorted=False)
                out, h = gru(packed)
                padded, lengths = pad_packed_sequence(out)
                (padded.sum() + h.pow(2).sum()).backward()
                optimizer.step()

            return step
    """),
    Case("rnn_cell_loop", """
        def build():
            cell = nn.RNNCell(8, 16, nonlinearity="relu")
            optimizer = torch.optim.SGD(cell.parameters(), lr=0.1)
            data = torch.randn(6, 3, 8)

            def step():
                optimizer.zero_grad()
                h = torch.zeros(3, 16)
                for x in data:
                    h = cell(x, h)
                h.pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    Case("lstm_cell_loop", """
        def build():
            cell = nn.LSTMCell(8, 16)
            optimizer = torch.optim.Adam(cell.parameters(), lr=1e-3)
            data = torch.randn(6, 3, 8)

            def step():
                optimizer.zero_grad()
                h, c = torch.zeros(3, 16), torch.zeros(3, 16)
                outputs = []
                for x in data:
                    h, c = cell(x, (h, c))
                    outputs.append(h)
                torch.stack(outputs).pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    Case("gru_cell_loop", """
        def build():
            cell = nn.GRUCell(8, 16)
            optimizer = torch.optim.SGD(cell.parameters(), lr=0.1, momentum=0.9)
            data = torch.randn(6, 3, 8)

            def step():
                optimizer.zero_grad()
                h = torch.zeros(3, 16)
                for x in data:
                    h = cell(x, h)
                h.pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    Case("gru_cell_attention_decoder", """
        class Decoder(nn.Module):
            def __init__(self, vocab=20, hidden=16):
                super().__init__()
                self.embed = nn.Embedding(vocab, hidden)
                self.attn = nn.Linear(2 * hidden, 1)
                self.cell = nn.GRUCell(2 * hidden, hidden)
                self.out = nn.Linear(hidden, vocab)

            def forward(self, memory, tokens):
                h = memory.mean(1)
                logits = []
                for t in range(tokens.shape[1]):
                    query = h.unsqueeze(1).expand_as(memory)
                    scores = self.attn(torch.cat([memory, query], -1)).squeeze(-1)
                    weights = scores.softmax(-1)
                    context = (weights.unsqueeze(-1) * memory).sum(1)
                    h = self.cell(torch.cat([self.embed(tokens[:, t]), context], -1), h)
                    logits.append(self.out(h))
                return torch.stack(logits, 1)

        def build():
            model = Decoder()
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
            memory = torch.randn(3, 7, 16)
            tokens = torch.randint(0, 20, (3, 5))

            def step():
                optimizer.zero_grad()
                logits = model(memory, tokens)
                F.cross_entropy(logits.flatten(0, 1), tokens.flatten()).backward()
                optimizer.step()

            return step
    """),
]


ATTENTION_CASES = [
    Case("multihead_attention_self_padding_mask", """
        def build():
            attention = nn.MultiheadAttention(16, 4, dropout=0.1, batch_first=True)
            optimizer = torch.optim.AdamW(attention.parameters(), lr=1e-3)
            x = torch.randn(3, 6, 16)
            padding = torch.tensor([[False] * 6, [False] * 4 + [True] * 2, [False] * 6])

            def step():
                optimizer.zero_grad()
                out, weights = attention(x, x, x, key_padding_mask=padding)
                (out.pow(2).mean() + weights.mean()).backward()
                optimizer.step()

            return step
    """),
    Case("multihead_attention_cross_kdim_vdim", """
        def build():
            attention = nn.MultiheadAttention(16, 2, kdim=12, vdim=10, bias=False,
                                              add_bias_kv=True, add_zero_attn=True)
            optimizer = torch.optim.SGD(attention.parameters(), lr=0.1)
            query, key, value = torch.randn(5, 2, 16), torch.randn(7, 2, 12), torch.randn(7, 2, 10)
            causal = torch.triu(torch.ones(5, 7, dtype=torch.bool), 1)

            def step():
                optimizer.zero_grad()
                out, _ = attention(query, key, value, attn_mask=causal,
                                   average_attn_weights=False)
                out.pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    _simple("transformer_encoder_layer_post_norm",
            "nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1), 2, "
            "enable_nested_tensor=False)",
            "torch.randn(6, 3, 16)",
            optimizer="torch.optim.AdamW(model.parameters(), lr=1e-3)"),
    _simple("transformer_encoder_layer_pre_norm_gelu",
            "nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, activation='gelu', "
            "batch_first=True, norm_first=True)",
            "torch.randn(3, 6, 16)",
            optimizer="torch.optim.AdamW(model.parameters(), lr=1e-3)"),
    Case("transformer_decoder_causal", """
        def build():
            layer = nn.TransformerDecoderLayer(16, 4, 32, dropout=0.1, batch_first=True)
            decoder = nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(16))
            optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-3)
            target, memory = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
            mask = nn.Transformer.generate_square_subsequent_mask(5)

            def step():
                optimizer.zero_grad()
                out = decoder(target, memory, tgt_mask=mask, tgt_is_causal=True)
                out.pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    Case("transformer_full", """
        def build():
            model = nn.Transformer(16, 2, 1, 1, 32, dropout=0.1, batch_first=True)
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
            source, target = torch.randn(2, 6, 16), torch.randn(2, 4, 16)

            def step():
                optimizer.zero_grad()
                model(source, target).pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    Case("scaled_dot_product_attention_causal_dropout", """
        class Block(nn.Module):
            def __init__(self, dim=16, heads=4):
                super().__init__()
                self.heads = heads
                self.qkv = nn.Linear(dim, 3 * dim)
                self.proj = nn.Linear(dim, dim)

            def forward(self, x):
                b, n, d = x.shape
                q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(
                    2, 0, 3, 1, 4)
                y = F.scaled_dot_product_attention(q, k, v, dropout_p=0.1, is_causal=True)
                return self.proj(y.transpose(1, 2).reshape(b, n, d))

        def build():
            model = Block()
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            x = torch.randn(2, 8, 16)

            def step():
                optimizer.zero_grad()
                model(x).pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    Case("attention_scores_masked_fill_inplace", """
        class Attention(nn.Module):
            def __init__(self, dim=16):
                super().__init__()
                self.q, self.k = nn.Linear(dim, dim), nn.Linear(dim, dim)
                self.v = nn.Linear(dim, dim)

            def forward(self, x, pad):
                scores = self.q(x) @ self.k(x).transpose(1, 2) / math.sqrt(x.shape[-1])
                # matmul saved its inputs, not the scores: writing them is safe
                scores.masked_fill_(pad[:, None, :], float("-inf"))
                return scores.softmax(-1) @ self.v(x)

        def build():
            model = Attention()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            x = torch.randn(2, 5, 16)
            pad = torch.tensor([[False] * 5, [False, False, False, True, True]])

            def step():
                optimizer.zero_grad()
                model(x, pad).pow(2).mean().backward()
                optimizer.step()

            return step
    """),
]


def _norm(name: str, model: str, shape: str) -> Case:
    return _simple(name, f"nn.Sequential(nn.Identity(), {model})", f"torch.randn({shape})",
                   loss="(out * torch.linspace(-1, 1, out.numel()).view_as(out)).sum()")


NORM_CASES = [
    _norm("batch_norm_1d", "nn.BatchNorm1d(8)", "4, 8, 5"),
    _norm("batch_norm_2d_momentum_none", "nn.BatchNorm2d(8, momentum=None)", "4, 8, 5, 5"),
    _norm("batch_norm_3d", "nn.BatchNorm3d(4)", "2, 4, 3, 4, 4"),
    _norm("instance_norm_2d_affine_running_stats",
          "nn.InstanceNorm2d(8, affine=True, track_running_stats=True)", "3, 8, 6, 6"),
    _norm("instance_norm_1d", "nn.InstanceNorm1d(8, affine=True)", "3, 8, 10"),
    _norm("group_norm", "nn.GroupNorm(4, 8)", "3, 8, 6, 6"),
    _norm("layer_norm", "nn.LayerNorm([6, 6])", "3, 8, 6, 6"),
    _norm("rms_norm", "nn.RMSNorm(16)", "3, 5, 16"),
    _norm("local_response_norm", "nn.Sequential(nn.Conv2d(8, 8, 3), nn.LocalResponseNorm(3))",
          "2, 8, 7, 7"),
    _simple("lazy_modules",
            "nn.Sequential(nn.LazyConv2d(8, 3), nn.LazyBatchNorm2d(), nn.ReLU(inplace=True), "
            "nn.Flatten(), nn.LazyLinear(4))",
            "torch.randn(2, 3, 8, 8)",
            optimizer="torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)"),
]

ACTIVATION_CASES = [
    _simple("conv_bn_relu_inplace",
            "nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(inplace=True), "
            "nn.Conv2d(8, 8, 3), nn.BatchNorm2d(8), nn.ReLU(inplace=True))",
            "torch.randn(2, 3, 12, 12)"),
    _simple("linear_leaky_relu_elu_celu_selu_inplace",
            "nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.1, inplace=True), nn.Linear(16, 16), "
            "nn.ELU(inplace=True), nn.Linear(16, 16), nn.CELU(inplace=True), "
            "nn.Linear(16, 16), nn.SELU(inplace=True), nn.Linear(16, 4))",
            "torch.randn(4, 8)"),
    _simple("mobile_activations_inplace",
            "nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.Hardswish(inplace=True), "
            "nn.Conv2d(8, 8, 3), nn.BatchNorm2d(8), nn.ReLU6(inplace=True), "
            "nn.Conv2d(8, 8, 1), nn.SiLU(inplace=True), nn.Conv2d(8, 8, 1), "
            "nn.Mish(inplace=True), nn.Conv2d(8, 8, 1), nn.Hardsigmoid(inplace=True), "
            "nn.Conv2d(8, 8, 1), nn.Hardtanh(-2, 2, inplace=True), nn.Conv2d(8, 4, 1), "
            "nn.Threshold(0.1, 0.0, inplace=True))",
            "torch.randn(2, 3, 10, 10)"),
    _simple("dropout_inplace_variants",
            "nn.Sequential(nn.Conv2d(3, 8, 3), nn.Dropout2d(0.2, inplace=True), "
            "nn.Flatten(), nn.Linear(8 * 36, 16), "
            "nn.Dropout(0.3, inplace=True), nn.Linear(16, 16), nn.AlphaDropout(0.2), "
            "nn.Linear(16, 4), nn.FeatureAlphaDropout(0.1))",
            "torch.randn(2, 3, 8, 8)"),
    Case("functional_inplace_activations", """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b, self.c = nn.Linear(8, 16), nn.Linear(16, 16), nn.Linear(16, 4)

            def forward(self, x):
                x = F.relu(self.a(x), inplace=True)
                x = F.dropout(self.b(x), 0.2, training=self.training, inplace=True)
                x = F.leaky_relu_(x, 0.2)
                return F.hardtanh(self.c(x), inplace=True)

        def build():
            model = Net()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            x = torch.randn(4, 8)

            def step():
                optimizer.zero_grad()
                model(x).pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    _simple("prelu_glu_softmax2d_logsoftmax",
            "nn.Sequential(nn.Conv2d(3, 8, 1), nn.PReLU(8), nn.GLU(1), nn.Softmax2d(), "
            "nn.Flatten(), nn.Linear(4 * 16, 5), nn.LogSoftmax(-1))",
            "torch.randn(2, 3, 4, 4)", loss="-out[:, 0].mean()"),
]

EMBEDDING_CASES = [
    _simple("embedding_padding_idx",
            "nn.Sequential(nn.Embedding(20, 8, padding_idx=0), nn.Flatten(), nn.Linear(40, 2))",
            "torch.tensor([[0, 3, 5, 0, 7], [1, 2, 0, 0, 0]])"),
    Case("embedding_max_norm", """
        def build():
            embed = nn.Embedding(20, 8, max_norm=1.0)
            head = nn.Linear(8, 3)
            optimizer = torch.optim.SGD(list(embed.parameters()) + list(head.parameters()),
                                        lr=0.5)
            tokens = torch.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])

            def step():
                optimizer.zero_grad()
                head(embed(tokens)).pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    Case("embedding_bag_and_sparse_embedding", """
        def build():
            bag = nn.EmbeddingBag(30, 8, mode="sum")
            sparse = nn.Embedding(30, 8, sparse=True)
            dense_opt = torch.optim.Adam(bag.parameters(), lr=1e-3)
            sparse_opt = torch.optim.SparseAdam(sparse.parameters(), lr=1e-3)
            tokens = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
            offsets = torch.tensor([0, 3])
            weights = torch.rand(8)

            def step():
                dense_opt.zero_grad()
                sparse_opt.zero_grad()
                out = bag(tokens, offsets, per_sample_weights=weights)
                (out.pow(2).mean() + sparse(tokens).pow(2).mean()).backward()
                dense_opt.step()
                sparse_opt.step()

            return step
    """),
]

LAYER_CASES = [
    _simple("conv_family",
            "nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, padding_mode='reflect'), "
            "nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=4, padding_mode='circular'), "
            "nn.ConvTranspose2d(8, 4, 3, stride=2, output_padding=1), nn.ReLU(inplace=True))",
            "torch.randn(2, 3, 8, 8)"),
    _simple("conv_1d_3d_transposed",
            "nn.Sequential(nn.Conv1d(3, 6, 3, padding='same'), "
            "nn.ConvTranspose1d(6, 4, 4, stride=2), "
            "nn.Unflatten(1, (1, 4)), nn.Unflatten(3, (4, 5)), nn.Conv3d(1, 2, 1), "
            "nn.ConvTranspose3d(2, 1, 1))",
            "torch.randn(2, 3, 9)"),
    _simple("pooling_family",
            "nn.Sequential(nn.Conv2d(3, 8, 3), nn.MaxPool2d(2), nn.AvgPool2d(2, ceil_mode=True), "
            "nn.LPPool2d(2, 1), nn.AdaptiveMaxPool2d(3), nn.AdaptiveAvgPool2d(2), nn.Flatten(), "
            "nn.Linear(32, 4))",
            "torch.randn(2, 3, 14, 14)"),
    Case("max_unpool_and_fractional_pool", """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3, padding=1)
                self.pool = nn.MaxPool2d(2, return_indices=True)
                self.unpool = nn.MaxUnpool2d(2)
                self.fractional = nn.FractionalMaxPool2d(2, output_ratio=0.5)

            def forward(self, x):
                y, indices = self.pool(self.conv(x))
                return self.fractional(self.unpool(y, indices))

        def build():
            model = Net()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            x = torch.randn(2, 3, 8, 8)

            def step():
                optimizer.zero_grad()
                model(x).pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    _simple("upsample_pixel_shuffle_fold",
            "nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.PixelShuffle(2), "
            "nn.Upsample(scale_factor=2, mode='bilinear'), nn.PixelUnshuffle(2), "
            "nn.Unfold(2, stride=2), nn.Fold((16, 16), 2, stride=2), "
            "nn.ZeroPad2d(1), nn.ReflectionPad2d(1), nn.Conv2d(16, 2, 3))",
            "torch.randn(2, 3, 8, 8)"),
    _simple("linear_bilinear_identity",
            "nn.Sequential(Both(), nn.Linear(4, 8), nn.Identity(), nn.Tanh(), "
            "nn.Linear(8, 8, bias=False))",
            "torch.randn(4, 6)", prelude="""
class Both(nn.Module):
    def __init__(self):
        super().__init__()
        self.bilinear = nn.Bilinear(6, 6, 4)

    def forward(self, x):
        return self.bilinear(x, x.flip(0))
"""),
    Case("losses_family", """
        def build():
            net = nn.Linear(6, 5)
            optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
            x = torch.randn(4, 6)
            labels = torch.tensor([0, 3, 4, 1])
            multi = torch.tensor([[1, 0, 1, 0, 0], [0, 1, 0, 0, 1], [1, 1, 0, 0, 0],
                                  [0, 0, 0, 1, 0]], dtype=torch.float)
            losses = [
                lambda y: nn.CrossEntropyLoss(label_smoothing=0.1)(y, labels),
                lambda y: nn.NLLLoss()(y.log_softmax(-1), labels),
                lambda y: nn.BCEWithLogitsLoss(pos_weight=torch.ones(5) * 2)(y, multi),
                lambda y: nn.BCELoss()(y.sigmoid(), multi),
                lambda y: nn.KLDivLoss(reduction="batchmean")(y.log_softmax(-1), multi.softmax(-1)),
                lambda y: nn.HuberLoss()(y, multi) + nn.SmoothL1Loss()(y, multi),
                lambda y: nn.L1Loss()(y, multi) + nn.PoissonNLLLoss()(y, multi),
                lambda y: nn.GaussianNLLLoss()(y, multi, torch.ones(4, 5)),
                lambda y: nn.MultiLabelSoftMarginLoss()(y, multi) + nn.MultiMarginLoss()(y, labels),
                lambda y: nn.CosineEmbeddingLoss()(y, multi, torch.tensor([1, -1, 1, -1])),
                lambda y: nn.TripletMarginLoss()(y, y.roll(1, 0), multi),
                lambda y: nn.MarginRankingLoss()(y[:, 0], y[:, 1], torch.tensor([1.0, -1, 1, -1])),
                lambda y: nn.HingeEmbeddingLoss()(y, multi * 2 - 1),
                lambda y: nn.SoftMarginLoss()(y, multi * 2 - 1),
                lambda y: nn.MultiLabelMarginLoss()(y, torch.tensor([[3, 0, -1, 1, 1]] * 4)),
            ]

            def step():
                optimizer.zero_grad()
                y = net(x)
                sum(loss(y) for loss in losses).backward()
                optimizer.step()

            return step
    """),
    Case("ctc_loss_with_lstm", """
        def build():
            lstm = nn.LSTM(8, 16, bidirectional=True)
            head = nn.Linear(32, 6)
            params = list(lstm.parameters()) + list(head.parameters())
            optimizer = torch.optim.Adam(params, lr=1e-3)
            x = torch.randn(12, 2, 8)
            targets = torch.tensor([[1, 2, 3, 2], [4, 5, 1, 0]])
            ctc = nn.CTCLoss(zero_infinity=True)

            def step():
                optimizer.zero_grad()
                out, _ = lstm(x)
                log_probs = head(out).log_softmax(-1)
                ctc(log_probs, targets, torch.tensor([12, 10]), torch.tensor([4, 3])).backward()
                optimizer.step()

            return step
    """),
]

FUNCTIONAL_CASES = [
    Case("functional_normalize_and_cosine", """
        def build():
            net = nn.Linear(8, 16)
            optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
            a, b = torch.randn(6, 8), torch.randn(6, 8)

            def step():
                optimizer.zero_grad()
                za, zb = F.normalize(net(a), dim=-1), F.normalize(net(b), dim=-1)
                logits = za @ zb.t() / 0.1
                loss = F.cross_entropy(logits, torch.arange(6)) + (
                    1 - F.cosine_similarity(za, zb)).mean()
                loss.backward()
                optimizer.step()

            return step
    """),
    Case("index_put_scatter_into_fresh_buffers", """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.score = nn.Linear(4, 1)

            def forward(self, x, index):
                values = self.score(x).squeeze(-1)
                grid = torch.zeros(3, 5)
                grid.index_put_((index[:, 0], index[:, 1]), values)  # grid: nothing saved it
                pooled = torch.zeros(3).index_add_(0, index[:, 0], values)
                spread = torch.zeros(6, 5).scatter_(1, index[:, 1:], values[:, None])
                return grid.sum() + pooled.pow(2).sum() + spread.pow(2).sum()

        def build():
            model = Net()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            x = torch.randn(6, 4)
            index = torch.tensor([[0, 1], [0, 3], [1, 0], [1, 4], [2, 2], [2, 3]])

            def step():
                optimizer.zero_grad()
                model(x, index).backward()
                optimizer.step()

            return step
    """),
    Case("inplace_ops_on_unsaved_tensors", """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 8)

            def forward(self, x):
                y = self.a(x)
                y += 1                     # addmm saved its inputs, not y
                y.mul_(0.5).clamp_(-3, 3)  # mul_ by a number saves nothing
                z = self.b(y)              # y is saved from here on: no more writes to it
                mask = z > 0
                z = z.masked_fill(mask, 0.0)
                return z.clone().masked_fill_(~mask, 1.0).mul(z)

        def build():
            model = Net()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            x = torch.randn(4, 8)

            def step():
                optimizer.zero_grad()
                model(x).pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    Case("residual_add_inplace_resnet_block", """
        class Block(nn.Module):
            def __init__(self, c=8):
                super().__init__()
                self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
                self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
                self.relu = nn.ReLU(inplace=True)

            def forward(self, x):
                out = self.relu(self.bn1(self.conv1(x)))
                out = self.bn2(self.conv2(out))
                out += x
                return self.relu(out)

        def build():
            model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), Block(), Block())
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                                        weight_decay=1e-4)
            x = torch.randn(2, 3, 8, 8)

            def step():
                optimizer.zero_grad()
                model(x).pow(2).mean().backward()
                optimizer.step()

            return step
    """),
]


def _optimizer_case(name: str, optimizer: str, scheduler: str = "None",
                    closure: bool = False, plateau: bool = False) -> Case:
    call = ("optimizer.step(closure)" if closure else
            "closure()\n                optimizer.step()")
    sched = ("scheduler.step(loss.item()) if scheduler else None" if plateau else
             "scheduler.step() if scheduler else None")
    return Case(name, f"""
        def build():
            model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(inplace=True), nn.Linear(12, 2))
            optimizer = {optimizer}
            scheduler = {scheduler}
            x, y = torch.randn(8, 6), torch.randn(8, 2)

            def closure():
                optimizer.zero_grad()
                loss = F.mse_loss(model(x), y)
                loss.backward()
                return loss

            def step():
                for _ in range(3):
                    {call}
                loss = F.mse_loss(model(x), y)
                {sched}

            return step
    """)


OPTIMIZER_CASES = [
    _optimizer_case("sgd_nesterov_step_lr", "torch.optim.SGD(model.parameters(), lr=0.1, "
                    "momentum=0.9, nesterov=True)",
                    "torch.optim.lr_scheduler.StepLR(optimizer, 2, gamma=0.5)"),
    _optimizer_case("adam_amsgrad_foreach_cosine",
                    "torch.optim.Adam(model.parameters(), lr=1e-2, amsgrad=True, foreach=True)",
                    "torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, 2)"),
    _optimizer_case("adamw_fused_one_cycle",
                    "torch.optim.AdamW(model.parameters(), lr=1e-2, fused=True)",
                    "torch.optim.lr_scheduler.OneCycleLR(optimizer, 0.1, total_steps=1000)"),
    _optimizer_case("rmsprop_centered_plateau",
                    "torch.optim.RMSprop(model.parameters(), lr=1e-2, centered=True, momentum=0.5)",
                    "torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)", plateau=True),
    _optimizer_case("adagrad_adadelta_adamax_chain",
                    "torch.optim.Adagrad(model.parameters(), lr=1e-2)",
                    "torch.optim.lr_scheduler.ChainedScheduler(["
                    "torch.optim.lr_scheduler.ExponentialLR(optimizer, 0.9), "
                    "torch.optim.lr_scheduler.LinearLR(optimizer)])"),
    _optimizer_case("nadam_radam_sequential_lr",
                    "torch.optim.NAdam(model.parameters(), lr=1e-2, decoupled_weight_decay=True)",
                    "torch.optim.lr_scheduler.SequentialLR(optimizer, [torch.optim.lr_scheduler."
                    "ConstantLR(optimizer), torch.optim.lr_scheduler.MultiStepLR(optimizer, [2])], "
                    "[2])"),
    _optimizer_case("lbfgs_closure", "torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4)",
                    closure=True),
    _optimizer_case("asgd_rprop_radam", "torch.optim.ASGD(model.parameters(), lr=1e-2)",
                    "torch.optim.lr_scheduler.LambdaLR(optimizer, lambda e: 0.9 ** e)"),
    _optimizer_case("rprop", "torch.optim.Rprop(model.parameters(), lr=1e-2)",
                    "torch.optim.lr_scheduler.CyclicLR(optimizer, 1e-3, 1e-2, 2, "
                    "cycle_momentum=False)"),
    _optimizer_case("adadelta_adamax_radam_param_groups",
                    "torch.optim.Adamax([{'params': model[0].parameters()}, "
                    "{'params': model[2].parameters(), 'lr': 1e-3}], lr=1e-2)",
                    "torch.optim.lr_scheduler.PolynomialLR(optimizer, 5)"),
]

PATTERN_CASES = [
    Case("autocast_bfloat16_step", """
        def build():
            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                                  nn.Flatten(), nn.Linear(8 * 36, 4))
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            x, labels = torch.randn(2, 3, 8, 8), torch.tensor([1, 3])

            def step():
                optimizer.zero_grad()
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    loss = F.cross_entropy(model(x), labels)
                loss.backward()
                optimizer.step()

            return step
    """),
    Case("grad_scaler_step", """
        def build():
            model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 2))
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scaler = torch.amp.GradScaler("cpu")
            x, y = torch.randn(4, 8), torch.randn(4, 2)

            def step():
                optimizer.zero_grad()
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    loss = F.mse_loss(model(x).float(), y)
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()

            return step
    """),
    Case("gradient_accumulation_clip", """
        def build():
            model = nn.Sequential(nn.Conv1d(4, 8, 3), nn.BatchNorm1d(8), nn.ReLU(inplace=True),
                                  nn.Flatten(), nn.Linear(48, 3))
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            batches = [(torch.randn(2, 4, 8), torch.randint(0, 3, (2,))) for _ in range(4)]

            def step():
                optimizer.zero_grad(set_to_none=True)
                for x, labels in batches:
                    (F.cross_entropy(model(x), labels) / len(batches)).backward()
                nn.utils.clip_grad_value_(model.parameters(), 0.5)
                nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
                optimizer.step()

            return step
    """),
    Case("torch_compile_module", """
        def build():
            model = torch.compile(nn.Sequential(nn.Linear(8, 16), nn.ReLU(inplace=True),
                                                nn.Linear(16, 2)))
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            x = torch.randn(4, 8)

            def step():
                optimizer.zero_grad()
                model(x).pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    Case("checkpoint_non_reentrant_and_reentrant", """
        from torch.utils.checkpoint import checkpoint, checkpoint_sequential

        def build():
            block = nn.Sequential(nn.Linear(8, 16), nn.ReLU(inplace=True), nn.Linear(16, 8))
            stack = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.Tanh()) for _ in range(4)])
            params = list(block.parameters()) + list(stack.parameters())
            optimizer = torch.optim.SGD(params, lr=0.1)
            x = torch.randn(4, 8, requires_grad=True)

            def step():
                optimizer.zero_grad()
                y = checkpoint(block, x, use_reentrant=False)
                z = checkpoint(block, y, use_reentrant=True)
                w = checkpoint_sequential(stack, 2, z, use_reentrant=False)
                w.pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    Case("weight_and_spectral_norm_parametrizations", """
        from torch.nn.utils import parametrizations

        def build():
            model = nn.Sequential(parametrizations.weight_norm(nn.Linear(8, 16)), nn.ReLU(),
                                  parametrizations.spectral_norm(nn.Linear(16, 4)),
                                  parametrizations.orthogonal(nn.Linear(4, 4)))
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
            x = torch.randn(6, 8)

            def step():
                optimizer.zero_grad()
                model(x).pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    Case("pruning_and_frozen_layers", """
        from torch.nn.utils import prune

        def build():
            model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                                  nn.Linear(16, 2))
            prune.l1_unstructured(model[2], "weight", amount=0.5)
            model[0].requires_grad_(False)
            optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
            x = torch.randn(4, 8)

            def step():
                optimizer.zero_grad()
                model(x).pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    Case("ema_of_weights_and_buffers", """
        import copy

        def build():
            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2))
            ema = copy.deepcopy(model).requires_grad_(False)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            x = torch.randn(2, 3, 8, 8)

            def step():
                optimizer.zero_grad()
                model(x).pow(2).mean().backward()
                optimizer.step()
                with torch.no_grad():
                    for e, p in zip(ema.state_dict().values(), model.state_dict().values()):
                        if e.dtype.is_floating_point:
                            e.lerp_(p, 0.1)
                        else:
                            e.copy_(p)

            return step
    """),
    Case("gan_alternating_steps", """
        def build():
            generator = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2, inplace=True),
                                      nn.Linear(16, 8), nn.Tanh())
            discriminator = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2, inplace=True),
                                          nn.Linear(16, 1))
            g_opt = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
            d_opt = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
            real = torch.randn(6, 8)
            bce = nn.BCEWithLogitsLoss()

            def step():
                fake = generator(torch.randn(6, 4))
                d_opt.zero_grad()
                d_loss = bce(discriminator(real), torch.ones(6, 1)) + bce(
                    discriminator(fake.detach()), torch.zeros(6, 1))
                d_loss.backward()
                d_opt.step()
                g_opt.zero_grad()
                bce(discriminator(fake), torch.ones(6, 1)).backward()
                g_opt.step()

            return step
    """),
    Case("two_losses_retain_graph", """
        def build():
            trunk = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
            heads = nn.ModuleList([nn.Linear(16, 1), nn.Linear(16, 3)])
            optimizer = torch.optim.SGD(list(trunk.parameters()) + list(heads.parameters()),
                                        lr=0.1)
            x = torch.randn(4, 8)

            def step():
                optimizer.zero_grad()
                features = trunk(x)
                heads[0](features).pow(2).mean().backward(retain_graph=True)
                heads[1](features).pow(2).mean().backward()
                optimizer.step()

            return step
    """),
    Case("custom_autograd_function_inplace_safe", """
        class ClampGrad(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.clone()
                y.clamp_(-1, 1)        # written before it is saved: autograd saves this
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad):
                (y,) = ctx.saved_tensors
                out = grad.clone()
                out.mul_(1 - y.pow(2))  # writes its own buffer
                return out

        def build():
            net = nn.Linear(6, 6)
            optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
            x = torch.randn(4, 6)

            def step():
                optimizer.zero_grad()
                ClampGrad.apply(net(x)).pow(2).mean().backward()
                optimizer.step()

            return step
    """),
]

TORCHVISION_CASES = [
    _simple("tv_resnet18", "torchvision.models.resnet18(num_classes=10)",
            "torch.randn(2, 3, 64, 64)", needs="torchvision", prelude="import torchvision"),
    _simple("tv_mobilenet_v3_small", "torchvision.models.mobilenet_v3_small(num_classes=10)",
            "torch.randn(2, 3, 64, 64)", needs="torchvision", prelude="import torchvision"),
    _simple("tv_efficientnet_b0", "torchvision.models.efficientnet_b0(num_classes=10)",
            "torch.randn(2, 3, 64, 64)", needs="torchvision", prelude="import torchvision"),
    _simple("tv_shufflenet_v2", "torchvision.models.shufflenet_v2_x0_5(num_classes=10)",
            "torch.randn(2, 3, 64, 64)", needs="torchvision", prelude="import torchvision"),
    _simple("tv_squeezenet", "torchvision.models.squeezenet1_1(num_classes=10)",
            "torch.randn(2, 3, 64, 64)", needs="torchvision", prelude="import torchvision"),
    _simple("tv_densenet_memory_efficient",
            "torchvision.models.DenseNet(growth_rate=8, block_config=(2, 2), "
            "num_init_features=16, memory_efficient=True, num_classes=10)",
            "torch.randn(2, 3, 32, 32)", needs="torchvision", prelude="import torchvision"),
    _simple("tv_regnet_y_400mf", "torchvision.models.regnet_y_400mf(num_classes=10)",
            "torch.randn(2, 3, 64, 64)", needs="torchvision", prelude="import torchvision"),
    _simple("tv_mnasnet", "torchvision.models.mnasnet0_5(num_classes=10)",
            "torch.randn(2, 3, 64, 64)", needs="torchvision", prelude="import torchvision"),
    _simple("tv_convnext_small_config",
            "torchvision.models.convnext.ConvNeXt([torchvision.models.convnext.CNBlockConfig("
            "16, 32, 1), torchvision.models.convnext.CNBlockConfig(32, None, 1)], "
            "stochastic_depth_prob=0.1, num_classes=10)",
            "torch.randn(2, 3, 32, 32)", needs="torchvision", prelude="import torchvision"),
    _simple("tv_vision_transformer_small",
            "torchvision.models.VisionTransformer(32, 8, 2, 2, 32, 64, dropout=0.1, "
            "num_classes=10)",
            "torch.randn(2, 3, 32, 32)", needs="torchvision", prelude="import torchvision"),
    _simple("tv_swin_small_config",
            "torchvision.models.SwinTransformer([2, 2], 16, [2, 2], [2, 2], [4, 4], "
            "stochastic_depth_prob=0.1, num_classes=10)",
            "torch.randn(2, 3, 32, 32)", needs="torchvision", prelude="import torchvision"),
    Case("tv_fasterrcnn_mobilenet", """
        import torchvision

        def build():
            model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
                weights=None, weights_backbone=None, num_classes=3, min_size=128, max_size=128)
            model.train()
            optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
            images = [torch.rand(3, 128, 128), torch.rand(3, 128, 128)]
            targets = [{"boxes": torch.tensor([[10.0, 20, 60, 90]]), "labels": torch.tensor([1])},
                       {"boxes": torch.tensor([[30.0, 30, 100, 110], [5, 5, 40, 40]]),
                        "labels": torch.tensor([2, 1])}]

            def step():
                optimizer.zero_grad()
                sum(model(images, targets).values()).backward()
                optimizer.step()

            return step
    """, "torchvision"),
    Case("tv_retinanet_fcos_ssdlite", """
        import torchvision
        from torchvision.models import detection
        from torchvision.models.detection.anchor_utils import AnchorGenerator
        from torchvision.models.detection.backbone_utils import mobilenet_backbone

        def backbone():
            return mobilenet_backbone(backbone_name="mobilenet_v3_small", weights=None,
                                      fpn=True, trainable_layers=6)

        def build():
            sizes = ((16, 24), (32, 48), (64, 96))
            models = [
                detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                         num_classes=3),
                detection.RetinaNet(backbone(), 3, min_size=96, max_size=96,
                                    anchor_generator=AnchorGenerator(sizes, ((0.5, 1.0),) * 3)),
                detection.FCOS(backbone(), 3, min_size=96, max_size=96,
                               anchor_generator=AnchorGenerator(((16,), (32,), (64,)),
                                                                ((1.0,),) * 3)),
            ]
            params = [p for m in models for p in m.parameters()]
            optimizer = torch.optim.SGD(params, lr=1e-3)
            images = [torch.rand(3, 96, 96), torch.rand(3, 96, 96)]  # batch norm needs 2
            box = {"boxes": torch.tensor([[10.0, 20, 60, 90]]), "labels": torch.tensor([1])}
            targets = [box, box]

            def step():
                optimizer.zero_grad()
                loss = sum(sum(m.train()(images, targets).values()) for m in models)
                loss.backward()
                optimizer.step()

            return step
    """, "torchvision"),
    Case("tv_maskrcnn_mobilenet_fpn", """
        import torchvision
        from torchvision.models import detection
        from torchvision.models.detection.anchor_utils import AnchorGenerator
        from torchvision.models.detection.backbone_utils import mobilenet_backbone

        def build():
            backbone = mobilenet_backbone(backbone_name="mobilenet_v3_small", weights=None,
                                          fpn=True, trainable_layers=6)
            anchors = AnchorGenerator(((32,), (64,), (128,)), ((0.5, 1.0, 2.0),) * 3)
            model = detection.MaskRCNN(backbone, num_classes=3, min_size=96, max_size=96,
                                       rpn_anchor_generator=anchors)
            model.train()
            optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
            masks = torch.zeros(1, 96, 96, dtype=torch.uint8)
            masks[0, 20:90, 10:60] = 1
            images = [torch.rand(3, 96, 96)]
            targets = [{"boxes": torch.tensor([[10.0, 20, 60, 90]]), "labels": torch.tensor([1]),
                        "masks": masks}]

            def step():
                optimizer.zero_grad()
                sum(model(images, targets).values()).backward()
                optimizer.step()

            return step
    """, "torchvision"),
    Case("tv_segmentation_models", """
        import torchvision
        from torchvision.models import segmentation

        def build():
            models = [
                segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                          num_classes=4, aux_loss=True),
                segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                       num_classes=4),
            ]
            params = [p for m in models for p in m.parameters()]
            optimizer = torch.optim.SGD(params, lr=1e-3, momentum=0.9)
            x = torch.randn(2, 3, 64, 64)
            labels = torch.randint(0, 4, (2, 64, 64))

            def step():
                optimizer.zero_grad()
                loss = 0
                for m in models:
                    out = m.train()(x)
                    loss = loss + sum(F.cross_entropy(o, labels) for o in out.values())
                loss.backward()
                optimizer.step()

            return step
    """, "torchvision"),
]


def _timm(name: str, model: str, size: int = 64, extra: str = "") -> Case:
    return _simple(f"timm_{name}", f"timm.create_model({model!r}, pretrained=False, "
                   f"num_classes=10{extra})", f"torch.randn(2, 3, {size}, {size})",
                   loss="F.cross_entropy(out, torch.tensor([1, 7]))",
                   optimizer="torch.optim.AdamW(model.parameters(), lr=1e-3)", needs="timm",
                   prelude="import timm")


TIMM_CASES = [
    _timm("resnet18d", "resnet18d"),
    _timm("efficientnet_b0_drop_path", "efficientnet_b0", extra=", drop_path_rate=0.1"),
    _timm("mobilenetv3_small_050", "mobilenetv3_small_050"),
    _timm("convnext_atto", "convnext_atto", extra=", drop_path_rate=0.1"),
    _timm("vit_tiny_patch16", "vit_tiny_patch16_224", size=32, extra=", img_size=32"),
    _timm("deit_tiny_distilled", "deit_tiny_distilled_patch16_224", size=32, extra=", img_size=32"),
    _timm("regnetx_002", "regnetx_002"),
    _timm("ghostnet_050", "ghostnet_050"),
    _timm("cspresnet50", "cspresnet50"),
    _timm("mixer_s32", "mixer_s32_224", size=64, extra=", img_size=64"),
    _timm("levit_128s", "levit_128s", size=224),
    _timm("efficientformer_l1", "efficientformer_l1", size=224),
    _timm("dla34", "dla34"),
    _timm("rexnet_100", "rexnet_100"),
]

CASES: list[Case] = [*RNN_CASES, *ATTENTION_CASES, *NORM_CASES, *ACTIVATION_CASES,
                     *EMBEDDING_CASES, *LAYER_CASES, *FUNCTIONAL_CASES, *OPTIMIZER_CASES,
                     *PATTERN_CASES, *TORCHVISION_CASES, *TIMM_CASES]


def write_cases(cases: list[Case], directory: Path) -> dict[str, Path]:
    paths = {}
    for case in cases:
        path = directory / f"zoo_{case.name}.py"
        path.write_text(module_source(case), encoding="utf-8")
        paths[case.name] = path
    return paths


# -- the zoo's venv -------------------------------------------------------------------


def ensure_venv(venv: Path) -> Path:
    """The zoo venv's python, made on first use (torch pinned, CUDA build from the
    registry: the local CPU wheel cannot import the registry's torchvision)."""
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import torch, torchvision, timm, numpy"]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return python
    print(f"making the zoo's venv in {venv} (about 5 GB, once)", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = dict(os.environ)
    env.pop("PIP_FIND_LINKS", None)  # the local wheel folder holds the CPU build
    env["PIP_CONFIG_FILE"] = os.devnull
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *ZOO_PACKAGES],
                   check=True, env=env)
    return python


# -- timing (runs inside the zoo's venv: python -m bench.probe_zoo --time-cases ...) ----


def time_cases(directory: Path, names: list[str], repeat: int) -> None:
    """Print one JSON line per case: median wall seconds of plain, probe, anomaly."""
    import importlib.util
    import itertools
    import warnings
    from contextlib import AbstractContextManager, nullcontext

    import torch

    from gradguard.probe.findings import Reporter
    from gradguard.probe.sites import UserFiles, library_dirs
    from gradguard.probe.tracker import Tracker

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    user_files = UserFiles([*library_dirs(), os.path.dirname(torch.__file__)],
                           [str(directory)])

    # One tracker for the whole run, as the child has: its caches (op schemas, node
    # types) are filled once, not on every step.
    reporter: list[Reporter] = []
    tracker = Tracker(user_files, lambda e: reporter[0].clobber(e),
                      lambda e: reporter[0].stale(e), lambda f: reporter[0].release(f),
                      lambda e: reporter[0].silent(e))
    reporter.append(Reporter(tracker, user_files, lambda kind, data: None, itertools.count()))

    def probe() -> AbstractContextManager[object]:
        return tracker.installed()

    variants = {"plain": nullcontext, "probe": probe,
                "anomaly": torch.autograd.detect_anomaly}
    for name in names:
        path = directory / f"zoo_{name}.py"
        spec = importlib.util.spec_from_file_location(f"zoo_{name}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            torch.manual_seed(0)
            step = module.build()
            walls: dict[str, list[float]] = {v: [] for v in variants}
            for round_ in range(repeat + 1):  # round 0 warms up (lazy modules, kernels)
                for variant, context in variants.items():
                    with context():
                        start = time.perf_counter()
                        step()
                        elapsed = time.perf_counter() - start
                    if round_:
                        walls[variant].append(elapsed)
            record: dict[str, Any] = {"name": name, **{
                v: statistics.median(w) for v, w in walls.items()}}
        except Exception as error:  # reported, not fatal: the table says which
            record = {"name": name, "error": f"{type(error).__name__}: {error}"}
        print(json.dumps(record), flush=True)


# -- the run --------------------------------------------------------------------------


def run_zoo(cases: list[Case], python: str, repeat: int) -> int:
    from gradguard.probe.runner import run_probes

    # One torch thread in the child too, as in the timing: on a small shared machine two
    # threads per op contend with everything else, and times swing by a factor of ten.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory(prefix="gradguard-zoo-") as tmp:
        directory = Path(tmp)
        paths = write_cases(cases, directory)
        started = time.monotonic()
        targets = [f"{paths[c.name]}::{ENTRY}" for c in cases]
        results = run_probes(targets, python=python, cwd=directory, timeout=PROBE_TIMEOUT)
        probe_total = time.monotonic() - started
        env = dict(os.environ, PYTHONPATH=str(ROOT / "server"), TORCH_COMPILE_DISABLE="1")
        timing = subprocess.run(
            [python, __file__, "--time-cases", str(directory), "--repeat", str(repeat),
             *[c.name for c in cases]], capture_output=True, text=True, env=env, cwd=tmp)
    times: dict[str, dict[str, Any]] = {}
    for line in timing.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            times[record["name"]] = record
    if timing.returncode != 0:
        print(timing.stderr[-3000:], file=sys.stderr)

    flagged, failed = [], []
    probe_ratios, anomaly_ratios = [], []
    print(f"{'case':48s} {'needs':11s} {'probe run':>9s} {'plain':>9s} {'probe':>9s} "
          f"{'x':>6s} {'anomaly':>9s} {'x':>6s}  findings")
    for case, result in zip(cases, results, strict=True):
        serious = [f for f in result.findings if f.get("severity") in ("error", "warning")]
        if serious:
            flagged.append((case.name, serious))
        if result.error or result.status != "ok":
            failed.append((case.name, result.error or result.status))
        timed = times.get(case.name, {})
        if "plain" in timed:
            plain, probe, anomaly = timed["plain"], timed["probe"], timed["anomaly"]
            probe_ratios.append(probe / plain)
            anomaly_ratios.append(anomaly / plain)
            cost = (f"{plain * 1e3:7.1f}ms {probe * 1e3:7.1f}ms {probe / plain:5.2f}x "
                    f"{anomaly * 1e3:7.1f}ms {anomaly / plain:5.2f}x")
        else:
            cost = f"{'timing failed: ' + str(timed.get('error', 'no record')):>45s}"[:45]
        print(f"{case.name:48s} {case.needs:11s} {result.duration:8.2f}s {cost}  "
              f"{len(serious) or '-'}{'' if result.status == 'ok' else ' ' + result.status}")

    print()
    print(f"zoo: {len(cases)} correct training steps; probe run (one child, all cases): "
          f"{probe_total:.1f} s")
    print(f"error/warning findings: {sum(len(f) for _, f in flagged)} on {len(flagged)} "
          f"cases; cases that did not run to their end: {len(failed)}")
    durations = sorted(r.duration for r in results)
    if durations:
        print(f"probe wall time per case (two steps): median {statistics.median(durations):.2f} s,"
              f" max {durations[-1]:.2f} s")
    if probe_ratios:
        probe_mean, anomaly_mean = _geomean(probe_ratios), _geomean(anomaly_ratios)
        print(f"one step, 1 thread, median of {repeat}: probe x{probe_mean:.2f} of plain "
              f"(geometric mean; median x{statistics.median(probe_ratios):.2f}, max "
              f"x{max(probe_ratios):.2f}), detect_anomaly x{anomaly_mean:.2f} (median "
              f"x{statistics.median(anomaly_ratios):.2f}, max x{max(anomaly_ratios):.2f}); "
              f"probe/detect_anomaly x{probe_mean / anomaly_mean:.2f} (target <= 1)")
    for name, findings in flagged:
        for finding in findings:
            print(f"  FINDING {name}: {finding['code']} line {finding['line']}: "
                  f"{finding['message']}")
    for name, error in failed:
        print(f"  FAILED {name}: {error}")
    return 1 if flagged or failed else 0


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="cases whose name contains this text")
    parser.add_argument("--nn-only", action="store_true",
                        help="only the torch.nn cases, with this interpreter's torch")
    parser.add_argument("--python", help="the interpreter to probe with (default: the "
                        "zoo's venv, made if missing)")
    parser.add_argument("--venv", type=Path, default=ZOO_VENV)
    parser.add_argument("--repeat", type=int, default=5, help="timed steps per variant")
    parser.add_argument("--time-cases", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("names", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.time_cases is not None:
        time_cases(args.time_cases, args.names, args.repeat)
        return 0
    cases = [c for c in CASES if (not args.nn_only or c.needs == "nn")
             and (args.only is None or args.only in c.name)]
    if args.python:
        python = args.python
    elif args.nn_only:
        python = sys.executable
    else:
        python = str(ensure_venv(args.venv))
    return run_zoo(cases, python, args.repeat)


if __name__ == "__main__":
    sys.exit(main())
