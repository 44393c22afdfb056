#!/usr/bin/python3
"""The PyTorch peer of `skiff nlp generate`: greedy decoding with a KV cache, eager mode.

    pytorch_generate.py make DIR [--tokenizer FILE]   # a random LLaMA model directory
    pytorch_generate.py run DIR THREADS N ID...       # prompt ids in, JSON out

`make` writes config.json (hidden 768, 12 layers, 12 heads sharing 4 K/V heads, SwiGLU
2048, vocab 4000: 78.6M parameters) and model.safetensors (F32, N(0, 0.02)), plus a copy of
the SentencePiece tokenizer it is given, so skiff reads the same directory.

`run` loads DIR in a plain-torch LLaMA (HF names and rotate_half rotary, as
tests/tools/llama/make_fixture.py), feeds the prompt once (prefill), then one token per
step with cached keys and values, greedy, and prints {"prefill_tok_s", "decode_tok_s",
"ids"} with the times of the two phases measured as skiff measures them (prefill ends
when the first new token is chosen).
"""
import json
import math
import shutil
import struct
import sys
import time

import torch
from torch import nn


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", f"{name}: only F32 is read here"
        a, b = info["data_offsets"]
        out[name] = torch.frombuffer(bytearray(data[a:b]), dtype=torch.float32).reshape(info["shape"])
    return out


def write_safetensors(path, tensors):
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        b = t.contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)


class Llama:
    """Inference only: weights as tensors, a list of (k, v) per layer as the cache."""

    def __init__(self, cfg, w):
        self.c, self.w = cfg, w
        self.heads, self.kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
        self.d = cfg.get("head_dim", cfg["hidden_size"] // self.heads)
        self.eps = cfg.get("rms_norm_eps", 1e-6)
        inv = 1.0 / (cfg.get("rope_theta", 10000.0) ** (torch.arange(0, self.d, 2, dtype=torch.float32) / self.d))
        self.inv = inv
        self.head = w.get("lm_head.weight", w["model.embed_tokens.weight"])

    def norm(self, x, g):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * g

    def rope(self, x, pos):
        f = torch.outer(pos.float(), self.inv)
        emb = torch.cat([f, f], -1)
        cos, sin = emb.cos(), emb.sin()
        h = x.shape[-1] // 2
        rot = torch.cat([-x[..., h:], x[..., :h]], -1)
        return x * cos + rot * sin

    def forward(self, ids, cache):
        w, t = self.w, ids.shape[0]
        past = cache[0][0].shape[1] if cache else 0
        pos = torch.arange(past, past + t)
        x = w["model.embed_tokens.weight"][ids]
        for i in range(self.c["num_hidden_layers"]):
            p = f"model.layers.{i}."
            y = self.norm(x, w[p + "input_layernorm.weight"])
            q = (y @ w[p + "self_attn.q_proj.weight"].T).view(t, self.heads, self.d).transpose(0, 1)
            k = (y @ w[p + "self_attn.k_proj.weight"].T).view(t, self.kv, self.d).transpose(0, 1)
            v = (y @ w[p + "self_attn.v_proj.weight"].T).view(t, self.kv, self.d).transpose(0, 1)
            q, k = self.rope(q, pos), self.rope(k, pos)
            if len(cache) > i:
                k = torch.cat([cache[i][0], k], 1)
                v = torch.cat([cache[i][1], v], 1)
                cache[i] = (k, v)
            else:
                cache.append((k, v))
            rep = self.heads // self.kv
            kk, vv = k.repeat_interleave(rep, 0), v.repeat_interleave(rep, 0)
            s = (q @ kk.transpose(1, 2)) / math.sqrt(self.d)
            if t > 1:
                s = s + torch.triu(torch.full((t, past + t), float("-inf")), past + 1)
            o = (s.softmax(-1) @ vv).transpose(0, 1).reshape(t, self.heads * self.d)
            x = x + o @ w[p + "self_attn.o_proj.weight"].T
            y = self.norm(x, w[p + "post_attention_layernorm.weight"])
            g = y @ w[p + "mlp.gate_proj.weight"].T
            x = x + (torch.nn.functional.silu(g) * (y @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
        x = self.norm(x[-1:], w["model.norm.weight"])
        return (x @ self.head.T)[0]


def make(out_dir, tokenizer):
    import os
    os.makedirs(out_dir, exist_ok=True)
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 4000, "hidden_size": 768,
           "intermediate_size": 2048, "num_hidden_layers": 12, "num_attention_heads": 12, "num_key_value_heads": 4,
           "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "max_position_embeddings": 2048,
           "tie_word_embeddings": True, "hidden_act": "silu", "bos_token_id": 1, "eos_token_id": 2}
    e, inter = cfg["hidden_size"], cfg["intermediate_size"]
    kvd = e // cfg["num_attention_heads"] * cfg["num_key_value_heads"]
    g = torch.Generator().manual_seed(0)
    rnd = lambda *shape: torch.randn(*shape, generator=g) * 0.02
    w = {"model.embed_tokens.weight": rnd(cfg["vocab_size"], e), "model.norm.weight": torch.ones(e)}
    for n in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{n}."
        w[p + "input_layernorm.weight"] = torch.ones(e)
        w[p + "post_attention_layernorm.weight"] = torch.ones(e)
        w[p + "self_attn.q_proj.weight"] = rnd(e, e)
        w[p + "self_attn.k_proj.weight"] = rnd(kvd, e)
        w[p + "self_attn.v_proj.weight"] = rnd(kvd, e)
        w[p + "self_attn.o_proj.weight"] = rnd(e, e)
        w[p + "mlp.gate_proj.weight"] = rnd(inter, e)
        w[p + "mlp.up_proj.weight"] = rnd(inter, e)
        w[p + "mlp.down_proj.weight"] = rnd(e, inter)
    write_safetensors(f"{out_dir}/model.safetensors", w)
    with open(f"{out_dir}/config.json", "w") as f:
        json.dump(cfg, f, indent=2)
    if tokenizer:
        shutil.copy(tokenizer, f"{out_dir}/tokenizer.model")
    print(f"{out_dir}: {sum(t.numel() for t in w.values())} parameters", file=sys.stderr)


def run(model_dir, threads, n, prompt):
    torch.set_num_threads(threads)
    with open(f"{model_dir}/config.json") as f:
        cfg = json.load(f)
    m = Llama(cfg, read_safetensors(f"{model_dir}/model.safetensors"))
    best = None
    for _ in range(3):  # the best of three runs, as skiff's side is run
        with torch.inference_mode():
            cache = []
            t0 = time.perf_counter()
            ids = [int(m.forward(torch.tensor(prompt), cache).argmax())]
            t1 = time.perf_counter()
            while len(ids) < n:
                ids.append(int(m.forward(torch.tensor(ids[-1:]), cache).argmax()))
            t2 = time.perf_counter()
        r = {"prefill_tok_s": len(prompt) / (t1 - t0), "decode_tok_s": (n - 1) / (t2 - t1), "ids": ids}
        if best is None or r["decode_tok_s"] > best["decode_tok_s"]:
            best = r
    print(json.dumps(best))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--tokenizer" else None)
    elif len(sys.argv) >= 5 and sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), [int(x) for x in sys.argv[5:]])
    else:
        sys.exit(__doc__)
