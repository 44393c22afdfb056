#!/usr/bin/python3
"""PyTorch twin of skiff_train_bench (bench/train_bench.cpp): the same three models,
one training step = forward + backward + AdamW step, printed as JSON lines.

Run through bench/compare_train.sh, which sets up the peer (Debian's python3-torch
with the OpenMP OpenBLAS) and prints skiff/PyTorch ratios.
    pytorch_train.py [threads, default 1,2] [filter]
"""
import json
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Crnn(nn.Module):
    classes = 6625

    def __init__(self):
        super().__init__()
        ch = [32, 64, 128, 128, 256, 256]
        self.convs, self.bns = nn.ModuleList(), nn.ModuleList()
        cin = 3
        for c in ch:
            self.convs.append(nn.Conv2d(cin, c, 3, 1, 1, bias=False))
            self.bns.append(nn.BatchNorm2d(c))
            cin = c
        self.rnn = nn.LSTM(256, 256, num_layers=2, bidirectional=True)
        self.fc = nn.Linear(512, self.classes)

    def forward(self, x):
        h = x
        for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):
            h = F.relu(bn(conv(h)))
            if i in (0, 1):
                h = F.max_pool2d(h, (2, 2))
            if i in (3, 5):
                h = F.max_pool2d(h, (2, 1))
        h = h.amax(dim=2).permute(2, 0, 1)  # [80, N, 256]
        seq, _ = self.rnn(h)
        return F.log_softmax(self.fc(seq), -1)


class Gpt(nn.Module):
    vocab, seq, dim = 8000, 128, 256

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(self.vocab, self.dim)
        self.pos = nn.Embedding(self.seq, self.dim)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(self.dim, 4, 4 * self.dim, 0.1, activation="gelu", batch_first=True,
                                       norm_first=True) for _ in range(6))
        self.norm = nn.LayerNorm(self.dim)
        self.head = nn.Linear(self.dim, self.vocab, bias=False)
        self.register_buffer("mask", torch.triu(torch.full((self.seq, self.seq), float("-inf")), 1))

    def forward(self, ids):
        h = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
        for b in self.blocks:
            h = b(h, src_mask=self.mask)
        return self.head(self.norm(h))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, 0, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return F.relu(h + (self.down(x) if self.down is not None else x))


class ResNet8(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        self.layers = nn.Sequential(BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2))
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        h = self.layers(F.relu(self.bn(self.stem(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(h, 1), 1))


def train_step(model, loss_fn):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-2)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn()
        loss.backward()
        opt.step()
        return loss.item()

    # What compare_train.sh checks against skiff_train_bench: the same architecture.
    step.params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    step.tensors = sum(1 for p in model.parameters() if p.requires_grad)
    return step


def make_crnn():
    m = Crnn()
    x = torch.randn(32, 3, 48, 320)
    lengths = torch.tensor([10 + (i * 7) % 16 for i in range(32)])
    targets = torch.randint(1, Crnn.classes, (32, 25))
    input_lengths = torch.full((32,), 80, dtype=torch.long)
    return train_step(m, lambda: F.ctc_loss(m(x), targets, input_lengths, lengths))


def make_gpt():
    m = Gpt()
    ids = torch.randint(0, Gpt.vocab, (8, Gpt.seq))
    nxt = torch.randint(0, Gpt.vocab, (8 * Gpt.seq,))
    return train_step(m, lambda: F.cross_entropy(m(ids).reshape(8 * Gpt.seq, Gpt.vocab), nxt))


def make_resnet8():
    m = ResNet8()
    x = torch.randn(128, 3, 32, 32)
    y = torch.randint(0, 10, (128,))
    return train_step(m, lambda: F.cross_entropy(m(x), y))


CASES = {"crnn": make_crnn, "gpt": make_gpt, "resnet8": make_resnet8}


def median_seconds(step, warmup=2, reps=5, min_time=2.0):
    for _ in range(warmup):
        step()
    times = []
    start = time.perf_counter()
    while len(times) < reps or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
        if len(times) > 200:
            break
    return statistics.median(times)


def main():
    threads = [int(t) for t in (sys.argv[1] if len(sys.argv) > 1 else "1,2").split(",")]
    filt = sys.argv[2] if len(sys.argv) > 2 else ""
    try:
        from peer_info import describe
        print(f"pytorch_train: {describe()}", file=sys.stderr)
    except Exception as e:  # informative only
        print(f"pytorch_train: cannot describe the BLAS: {e}", file=sys.stderr)
    for nt in threads:
        torch.set_num_threads(nt)
        for name, make in CASES.items():
            if filt and filt not in name:
                continue
            torch.manual_seed(0)
            step = make()
            t = median_seconds(step)
            print(json.dumps({"bench": name, "threads": nt, "seconds": t, "params": step.params,
                              "param_tensors": step.tensors}))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
