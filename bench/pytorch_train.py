#!/usr/bin/python3
"""PyTorch twin of skiff_train_bench (bench/train_bench.cpp): the same five models,
one training step = forward + backward + AdamW step, printed as JSON lines.

Run through bench/compare_train.sh, which sets up the peer (Debian's python3-torch
with the OpenMP OpenBLAS) and prints skiff/PyTorch ratios.
    pytorch_train.py [threads, default 1,2] [filter]
"""
import json
import math
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


# ---- (d) PicoDet-class detector: the detection suite's model and loss ----------------------
# LCNet x1.0 / LCPAN 128 / PicoHeadV2 (2 convs, reg_max 7) as suites/detection/train/picodet.cpp
# builds it, and the same training loss (gfl_loss.cpp): TOOD task-aligned assignment on the
# detached predictions, varifocal + GIoU + distribution focal losses.

def make_divisible(c, d=8):
    r = max(d, int(c + d / 2) // d * d)
    return r + d if r < 0.9 * c else r


class ConvBn(nn.Module):
    def __init__(self, cin, cout, k, stride=1, groups=1, act=True):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = act

    def forward(self, x):
        y = self.bn(self.conv(x))
        return F.hardswish(y) if self.act else y


class SE(nn.Module):
    def __init__(self, c):
        super().__init__()
        mid = max(8, c // 4)
        self.conv1, self.conv2 = nn.Conv2d(c, mid, 1), nn.Conv2d(mid, c, 1)

    def forward(self, x):
        return x * F.hardsigmoid(self.conv2(F.relu(self.conv1(F.adaptive_avg_pool2d(x, 1)))))


class DwSep(nn.Module):
    def __init__(self, cin, cout, k, stride, se):
        super().__init__()
        self.dw = ConvBn(cin, cin, k, stride, cin)
        self.se = SE(cin) if se else None
        self.pw = ConvBn(cin, cout, 1)

    def forward(self, x):
        y = self.dw(x)
        if self.se is not None:
            y = self.se(y)
        return self.pw(y)


class NeckBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.c1, self.dw, self.c2 = ConvBn(cin, cout, 1), ConvBn(cout, cout, 5, 1, cout), ConvBn(cout, cout, 1)

    def forward(self, x):
        return self.c2(self.dw(self.c1(x)))


class PicoDet(nn.Module):
    strides = (8, 16, 32)

    def __init__(self, classes=8, scale=0.35, neck=64, feat_convs=2, reg_max=7):
        super().__init__()
        stacks = [[(3, 32, 1, False)], [(3, 64, 2, False), (3, 64, 1, False)],
                  [(3, 128, 2, False), (3, 128, 1, False)],
                  [(3, 256, 2, False), (5, 256, 1, False), (5, 256, 1, False)],
                  [(5, 512, 2, True), (5, 512, 1, True)]]
        c = make_divisible(16 * scale)
        self.stem = ConvBn(3, c, 3, 2)
        self.stacks, outs = nn.ModuleList(), []
        for i, stack in enumerate(stacks):
            blocks = []
            for k, o, s, se in stack:
                o = make_divisible(o * scale)
                blocks.append(DwSep(c, o, k, s, se))
                c = o
            self.stacks.append(nn.Sequential(*blocks))
            if i >= 2:
                outs.append(c)
        self.lateral = nn.ModuleList(ConvBn(ci, neck, 1) for ci in outs)
        self.top_down = nn.ModuleList(NeckBlock(2 * neck, neck) for _ in range(2))
        self.down = nn.ModuleList(ConvBn(neck, neck, 5, 2, neck) for _ in range(2))
        self.bottom_up = nn.ModuleList(NeckBlock(2 * neck, neck) for _ in range(2))
        self.towers = nn.ModuleList(
            nn.Sequential(*[m for _ in range(feat_convs) for m in (ConvBn(neck, neck, 5, 1, neck), ConvBn(neck, neck, 1))])
            for _ in range(3))
        self.out = nn.ModuleList(nn.Conv2d(neck, classes + 4 * (reg_max + 1), 1) for _ in range(3))
        self.classes, self.reg_max = classes, reg_max

    def forward(self, x):
        h, levels = self.stem(x), []
        for i, s in enumerate(self.stacks):
            h = s(h)
            if i >= 2:
                levels.append(h)
        lat = [l(v) for l, v in zip(self.lateral, levels)]
        td = [None, None, lat[2]]
        for i in (1, 0):
            td[i] = self.top_down[i](torch.cat([F.interpolate(td[i + 1], scale_factor=2.0, mode="nearest"), lat[i]], 1))
        out = [td[0]]
        for i in range(2):
            out.append(self.bottom_up[i](torch.cat([self.down[i](out[i]), td[i + 1]], 1)))
        cls, reg, grids = [], [], []
        for i, f in enumerate(out):
            y = self.out[i](self.towers[i](f))
            n, _, hh, ww = y.shape
            cells = y.reshape(n, y.shape[1], hh * ww).permute(0, 2, 1)
            cls.append(cells[..., :self.classes])
            reg.append(cells[..., self.classes:])
            grids.append((hh, ww))
        return torch.cat(cls, 1), torch.cat(reg, 1), grids


def anchor_points(grids, strides):
    pts = []
    for (h, w), s in zip(grids, strides):
        ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        pts.append(torch.stack([(xs.reshape(-1) + 0.5) * s, (ys.reshape(-1) + 0.5) * s,
                                torch.full((h * w,), float(s))], 1))
    return torch.cat(pts, 0)


def box_iou(a, b):  # [P, 4] x [G, 4] -> [P, G]
    lt = torch.maximum(a[:, None, :2], b[None, :, :2])
    rb = torch.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    area = lambda t: (t[:, 2:] - t[:, :2]).clamp(min=0).prod(-1)
    return inter / (area(a)[:, None] + area(b)[None, :] - inter + 1e-12)


def assign(probs, pred, anchors, gt_boxes, gt_labels, topk=13, alpha=1.0, beta=6.0):
    """TOOD assignment of one image: returns per-cell object index (-1: none) and target score."""
    cells = pred.shape[0]
    obj = torch.full((cells,), -1, dtype=torch.long)
    score = torch.zeros(cells)
    if gt_boxes.shape[0] == 0:
        return obj, score
    iou = box_iou(pred, gt_boxes)                               # [A, G]
    t = probs[:, gt_labels].pow(alpha) * iou.pow(beta)          # [A, G]
    cx, cy = anchors[:, 0:1], anchors[:, 1:2]
    inside = (cx > gt_boxes[:, 0]) & (cx < gt_boxes[:, 2]) & (cy > gt_boxes[:, 1]) & (cy < gt_boxes[:, 3])
    centre = (gt_boxes[:, :2] + gt_boxes[:, 2:]) / 2
    dist = (cx - centre[:, 0]) ** 2 + (cy - centre[:, 1]) ** 2
    # Largest t first, nearer the centre on ties: sort by (t desc, dist asc) among inside cells.
    key = torch.where(inside, t * 1e6 - dist * 1e-6, torch.full_like(t, -float("inf")))
    k = min(topk, cells)
    top = key.topk(k, 0).indices                                # [k, G]
    chosen = torch.zeros_like(inside)
    chosen.scatter_(0, top, True)
    chosen &= inside
    masked_iou = torch.where(chosen, iou, torch.full_like(iou, -1.0))
    best_iou, best = masked_iou.max(1)
    pos = best_iou >= 0
    obj[pos] = best[pos]
    metric = t[torch.arange(cells), best] * pos
    max_t = torch.zeros(gt_boxes.shape[0]).scatter_reduce(0, best[pos], metric[pos], "amax")
    max_u = torch.zeros(gt_boxes.shape[0]).scatter_reduce(0, best[pos], best_iou[pos], "amax")
    score[pos] = metric[pos] / (max_t[best[pos]] + 1e-9) * max_u[best[pos]]
    return obj, score


def gfl_loss(cls, reg, anchors, truth, reg_max):
    n, cells, classes = cls.shape
    bins = reg_max + 1
    proj = torch.arange(bins, dtype=torch.float32)
    with torch.no_grad():
        probs = cls.sigmoid()
        d = (reg.reshape(n, cells, 4, bins).softmax(-1) @ proj) * anchors[:, 2:3]
        c = anchors[:, :2]
        pred = torch.cat([c - d[..., :2], c + d[..., 2:]], -1)
    target = torch.zeros_like(cls)
    positive = torch.zeros_like(cls)
    pos_idx, pos_w, pos_box = [], [], []
    for b, (boxes, labels) in enumerate(truth):
        obj, score = assign(probs[b], pred[b], anchors, boxes, labels)
        p = (obj >= 0).nonzero().squeeze(1)
        target[b, p, labels[obj[p]]] = score[p]
        positive[b, p, labels[obj[p]]] = 1.0
        pos_idx.append(p + b * cells)
        pos_w.append(score[p])
        pos_box.append(boxes[obj[p]])
    pos_idx, w, gt = torch.cat(pos_idx), torch.cat(pos_w), torch.cat(pos_box)
    norm = max(float(w.sum()), 1.0)
    p_sig = cls.sigmoid()
    weight = 0.75 * p_sig.pow(2) * (1 - positive) + target * positive
    vfl = ((F.softplus(cls) - cls * target) * weight).sum() / norm
    rows = reg.reshape(n * cells, 4 * bins)[pos_idx].reshape(-1, bins)
    a = anchors[pos_idx % cells]
    dist = (rows.softmax(-1) @ proj).reshape(-1, 4) * a[:, 2:3]
    boxes = torch.cat([a[:, :2] - dist[:, :2], a[:, :2] + dist[:, 2:]], 1)
    lt, rb = torch.maximum(boxes[:, :2], gt[:, :2]), torch.minimum(boxes[:, 2:], gt[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(1)
    area = lambda t: (t[:, 2:] - t[:, :2]).clamp(min=0).prod(1)
    union = area(boxes) + area(gt) - inter + 1e-10
    enc = (torch.maximum(boxes[:, 2:], gt[:, 2:]) - torch.minimum(boxes[:, :2], gt[:, :2])).prod(1) + 1e-10
    giou = (((1 - (inter / union - (enc - union) / enc)) * w).sum()) / norm
    tgt = torch.cat([a[:, :2] - gt[:, :2], gt[:, 2:] - a[:, :2]], 1) / a[:, 2:3]
    tgt = tgt.reshape(-1).clamp(0, reg_max - 1e-3)
    left = tgt.floor().long()
    logp = rows.log_softmax(-1)
    dfl = -(logp.gather(1, left[:, None]).squeeze(1) * (left + 1 - tgt) +
            logp.gather(1, (left + 1)[:, None]).squeeze(1) * (tgt - left))
    dfl = ((dfl.reshape(-1, 4).mean(1) * w).sum()) / norm
    return vfl + 2.5 * giou + 0.5 * dfl


def make_picodet():
    m = PicoDet(scale=1.0, neck=128)  # the recipe's model (configs/detection/_base_/picodet_lcnet.yml)
    with torch.no_grad():  # the head's class-logit prior, as picodet.cpp starts it
        for o in m.out:
            o.bias[: m.classes].fill_(-4.59511985)
    x = torch.randn(16, 3, 320, 320)
    truth = []
    for i in range(16):  # the same boxes as train_bench.cpp
        boxes, labels = [], []
        for k in range(3):
            w, h = 24 + (i * 37 + k * 53) % 129, 24 + (i * 59 + k * 31) % 129
            x0, y0 = (i * 71 + k * 97) % int(320 - w), (i * 43 + k * 89) % int(320 - h)
            boxes.append([x0, y0, x0 + w, y0 + h])
            labels.append((i + k) % 8)
        truth.append((torch.tensor(boxes, dtype=torch.float32), torch.tensor(labels)))
    state = {}

    def loss():
        cls, reg, grids = m(x)
        if "anchors" not in state:
            state["anchors"] = anchor_points(grids, PicoDet.strides)
        return gfl_loss(cls, reg, state["anchors"], truth, m.reg_max)

    return train_step(m, loss)


# ---- (e) BERT-style encoder classifier: suites/nlp/encoder/ as configs/nlp/spam_classifier.yml ----
# PyTorch's own nn.TransformerEncoderLayer (its fast configuration: fused in-projection,
# SDPA attention) with the padding mask; N(0, 0.02) embeddings as skiff starts them.
class EncoderClassifier(nn.Module):
    vocab, seq, dim = 8003, 128, 128

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(self.vocab, self.dim)
        self.pos = nn.Embedding(self.seq, self.dim)
        nn.init.normal_(self.tok.weight, std=0.02)
        nn.init.normal_(self.pos.weight, std=0.02)
        self.embed_norm = nn.LayerNorm(self.dim)
        self.drop = nn.Dropout(0.1)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(self.dim, 4, 512, 0.1, activation="gelu", batch_first=True, norm_first=True)
            for _ in range(2))
        self.final_norm = nn.LayerNorm(self.dim)
        self.pooler = nn.Linear(self.dim, self.dim)
        self.classifier = nn.Linear(self.dim, 2)

    def forward(self, ids, pad):
        h = self.drop(self.embed_norm(self.tok(ids) + self.pos(torch.arange(ids.shape[1]))))
        for layer in self.layers:
            h = layer(h, src_key_padding_mask=pad)
        h = self.final_norm(h)
        return self.classifier(self.drop(torch.tanh(self.pooler(h[:, 0]))))


def make_encoder():
    m = EncoderClassifier()
    pad_id, cls_id = 8000, 8001
    ids = torch.full((32, 128), pad_id, dtype=torch.long)
    for r in range(32):  # the same rows as train_bench.cpp
        n = 48 + (r * 37) % 81
        ids[r, 0] = cls_id
        for j in range(1, n):
            ids[r, j] = 3 + (r * 131 + j * 17) % 7997
    pad = ids == pad_id
    y = torch.tensor([r % 2 for r in range(32)])
    return train_step(m, lambda: F.cross_entropy(m(ids, pad), y))


class ClipCnn(nn.Module):
    """The multimodal suite's dual encoder (configs/multimodal/clip_synth.yml)."""
    vocab, ctx, width, embed = 50, 16, 128, 64

    def __init__(self):
        super().__init__()
        stages, cin = [], 3
        for c in (32, 64, 128, 256):
            stages += [nn.Conv2d(cin, c, 3, 2, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                       nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
            cin = c
        self.stages = nn.Sequential(*stages)
        self.vproj = nn.Linear(cin, self.embed, bias=False)
        self.tok = nn.Embedding(self.vocab, self.width)
        self.pos = nn.Parameter(torch.randn(self.ctx, self.width) * 0.01)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(self.width, 4, 4 * self.width, 0.0, activation="gelu", batch_first=True,
                                       norm_first=True) for _ in range(3))
        self.ln = nn.LayerNorm(self.width)
        self.tproj = nn.Linear(self.width, self.embed, bias=False)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def image(self, x):
        return F.normalize(self.vproj(self.stages(x).mean((2, 3))), dim=-1)

    def text(self, ids, pad):
        t = ids.shape[1]
        h = self.tok(ids) + self.pos[:t]
        causal = torch.triu(torch.full((t, t), float("-inf")), 1)
        for layer in self.layers:
            h = layer(h, src_mask=causal, src_key_padding_mask=pad)
        h = self.ln(h)
        last = (~pad).sum(1) - 1
        return F.normalize(self.tproj(h[torch.arange(ids.shape[0]), last]), dim=-1)

    def loss(self, x, ids, pad):
        logits = self.image(x) @ self.text(ids, pad).T * self.logit_scale.clamp(max=math.log(100)).exp()
        y = torch.arange(x.shape[0])
        return (F.cross_entropy(logits, y) + F.cross_entropy(logits.T, y)) / 2


def make_clip():
    m = ClipCnn()
    x = torch.randn(64, 3, 64, 64)
    ids = torch.zeros(64, 9, dtype=torch.long)
    pad = torch.ones(64, 9, dtype=torch.bool)
    for r in range(64):  # the same rows as train_bench.cpp
        n = 3 + (r * 5) % 7
        for j in range(n):
            ids[r, j] = 3 if j + 1 == n else 5 + (r * 7 + j * 11) % 45
            pad[r, j] = False
    return train_step(m, lambda: m.loss(x, ids, pad))


CASES = {"crnn": make_crnn, "gpt": make_gpt, "resnet8": make_resnet8, "picodet": make_picodet,
         "encoder": make_encoder, "clip": make_clip}


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
