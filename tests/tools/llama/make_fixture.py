#!/usr/bin/python3
"""Writes the tiny LLaMA fixtures of tests/data/llama/ from an independent PyTorch model.

Regenerate (Debian's python3-torch 1.13; no transformers, no safetensors package):

    /usr/bin/python3 tests/tools/llama/make_fixture.py tests/data/llama

The model below is the Hugging Face LLaMA architecture written out in plain torch with
HF's parameter names (model.embed_tokens.weight, model.layers.N.self_attn.q_proj.weight,
..., model.norm.weight, lm_head.weight): RMSNorm, grouped-query attention with rotary
embeddings in the rotate_half convention (rope_scaling null / linear / llama3), SwiGLU
MLP, tied or untied head. Weights are rounded to the dtype they are stored in (BF16,
F16, F32) before the reference logits are computed, so skiff, which converts them to
f32, must reproduce the logits to float32 rounding.

Fixtures (each a Hugging Face model directory):
  tiny/          single model.safetensors (BF16), untied, GQA 4/2, no rope scaling,
                 vocab 272 with tokenizer.json (byte-level BPE), tokenizer_config.json (a chat
                 template) and generation_config.json
  tiny_sharded/  two shards + model.safetensors.index.json (F16), tied embeddings,
                 llama3 rope scaling, explicit head_dim, bos/eos as lists
  tiny_linear/   single file (F32), plain MHA, head_dim 12 != hidden/heads, linear rope
                 scaling (old "type" key), attention and MLP biases
and <name>_expected.safetensors: input_ids [2, T] (row 1 left-padded), attention_mask,
logits [2, T, V] (F32), greedy_prompt [P] and greedy_ids [N] (8 greedy tokens, no cache,
no stop tokens).
"""
import json
import math
import os
import struct
import sys

import torch
from torch import nn

torch.set_num_threads(1)


# ---- the model ------------------------------------------------------------------------

def inv_frequencies(cfg):
    dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    inv = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    rs = cfg.get("rope_scaling")
    if rs is None:
        return inv
    kind = rs.get("rope_type", rs.get("type"))
    if kind == "linear":
        return inv / rs["factor"]
    if kind == "llama3":
        factor, lo, hi = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
        old = rs["original_max_position_embeddings"]
        wavelen = 2 * math.pi / inv
        out = torch.where(wavelen > old / lo, inv / factor, inv)
        smooth = (old / wavelen - lo) / (hi - lo)
        smoothed = (1 - smooth) * out / factor + smooth * out
        medium = (wavelen >= old / hi) & (wavelen <= old / lo)
        return torch.where(medium, smoothed, out)
    raise ValueError(kind)


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        e, self.h = cfg["hidden_size"], cfg["num_attention_heads"]
        self.kv = cfg.get("num_key_value_heads") or self.h
        self.d = cfg.get("head_dim") or e // self.h
        bias = cfg.get("attention_bias", False)
        self.q_proj = nn.Linear(e, self.h * self.d, bias=bias)
        self.k_proj = nn.Linear(e, self.kv * self.d, bias=bias)
        self.v_proj = nn.Linear(e, self.kv * self.d, bias=bias)
        self.o_proj = nn.Linear(self.h * self.d, e, bias=bias)

    def forward(self, x, cos, sin, mask):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.h, self.d).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv, self.d).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv, self.d).transpose(1, 2)
        cos, sin = cos[:, None], sin[:, None]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.h // self.kv  # head i reads kv head i // rep (HF repeat_kv)
        k = k[:, :, None].expand(b, self.kv, rep, t, self.d).reshape(b, self.h, t, self.d)
        v = v[:, :, None].expand(b, self.kv, rep, t, self.d).reshape(b, self.h, t, self.d)
        s = q @ k.transpose(2, 3) / math.sqrt(self.d) + mask
        o = torch.softmax(s, dim=-1) @ v
        return self.o_proj(o.transpose(1, 2).reshape(b, t, self.h * self.d))


class Mlp(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        e, i, bias = cfg["hidden_size"], cfg["intermediate_size"], cfg.get("mlp_bias", False)
        self.gate_proj = nn.Linear(e, i, bias=bias)
        self.up_proj = nn.Linear(e, i, bias=bias)
        self.down_proj = nn.Linear(i, e, bias=bias)

    def forward(self, x):
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.self_attn = Attention(cfg)
        self.mlp = Mlp(cfg)
        self.input_layernorm = RMSNorm(cfg["hidden_size"], cfg["rms_norm_eps"])
        self.post_attention_layernorm = RMSNorm(cfg["hidden_size"], cfg["rms_norm_eps"])

    def forward(self, x, cos, sin, mask):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class Body(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"])
        self.layers = nn.ModuleList([Layer(cfg) for _ in range(cfg["num_hidden_layers"])])
        self.norm = RMSNorm(cfg["hidden_size"], cfg["rms_norm_eps"])


class Llama(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.model = Body(cfg)
        if not cfg.get("tie_word_embeddings", False):
            self.lm_head = nn.Linear(cfg["hidden_size"], cfg["vocab_size"], bias=False)

    def forward(self, ids, attention_mask=None):
        b, t = ids.shape
        if attention_mask is None:
            attention_mask = torch.ones(b, t, dtype=torch.int64)
        # HF generate's positions: count of real tokens before, pads at 1 (never read).
        pos = (attention_mask.cumsum(-1) - 1).masked_fill(attention_mask == 0, 1)
        freqs = pos[:, :, None].double() * inv_frequencies(self.cfg)[None, None]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().float(), emb.sin().float()
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
        allowed = causal[None] & (attention_mask[:, None, :] == 1)
        mask = torch.where(allowed, 0.0, torch.finfo(torch.float32).min)[:, None]
        x = self.model.embed_tokens(ids)
        for layer in self.model.layers:
            x = layer(x, cos, sin, mask)
        x = self.model.norm(x)
        w = self.model.embed_tokens.weight if self.cfg.get("tie_word_embeddings") else self.lm_head.weight
        return x @ w.t()


# ---- files ----------------------------------------------------------------------------

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "I64": torch.int64}


def tensor_bytes(t, dtype):
    t = t.detach().to(DTYPES[dtype]).contiguous()
    if dtype == "BF16":  # numpy has no bfloat16: reinterpret the bits
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def write_safetensors(path, tensors, dtype_of):
    """Hand-written safetensors: u64 header length, JSON header, raw little-endian data."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        dtype = dtype_of(name)
        data = tensor_bytes(tensors[name], dtype)
        header[name] = {"dtype": dtype, "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def byte_alphabet():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def write_tokenizer(path):
    """Byte-level BPE: 256 byte tokens, 14 merges (ids 256..269), <s> 270, </s> 271."""
    char = byte_alphabet()
    vocab = {char[b]: b for b in range(256)}
    merges = [("h", "e"), ("l", "l"), ("he", "ll"), ("hell", "o"), ("Ġ", "w"), ("o", "r"), ("Ġw", "or"),
              ("l", "d"), ("Ġwor", "ld"), ("Ġ", "t"), ("Ġt", "he"), ("i", "n"), ("Ġ", "a"), ("e", "r")]
    for i, (a, b) in enumerate(merges):
        vocab[a + b] = 256 + i
    special = [{"id": 270, "content": "<s>", "single_word": False, "lstrip": False, "rstrip": False,
                "normalized": False, "special": True},
               {"id": 271, "content": "</s>", "single_word": False, "lstrip": False, "rstrip": False,
                "normalized": False, "special": True}]
    doc = {"version": "1.0", "added_tokens": special, "normalizer": None,
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                             "use_regex": True},
           "post_processor": {"type": "TemplateProcessing",
                              "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                         {"Sequence": {"id": "A", "type_id": 0}}],
                              "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                       {"Sequence": {"id": "A", "type_id": 0}},
                                       {"SpecialToken": {"id": "<s>", "type_id": 1}},
                                       {"Sequence": {"id": "B", "type_id": 1}}],
                              "special_tokens": {"<s>": {"id": "<s>", "ids": [270], "tokens": ["<s>"]}}},
           "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
           "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                     "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                     "vocab": vocab, "merges": [a + " " + b for a, b in merges]}}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)


def write_tokenizer_config(path):
    """A ChatML-like chat template over the tiny tokenizer's <s> and </s> (for `skiff nlp chat`)."""
    template = ("{% for message in messages %}{{ bos_token + message['role'] + '\\n' + message['content'] + eos_token + '\\n' }}"
                "{% endfor %}{% if add_generation_prompt %}{{ bos_token + 'assistant\\n' }}{% endif %}")
    doc = {"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": True, "tokenizer_class": "PreTrainedTokenizerFast",
           "chat_template": template}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=2)
        f.write("\n")


def randomize(model, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.3 * torch.randn(p.shape, generator=g))
            # What the file will hold, read back as f32.
            p.copy_(p.to(DTYPES[dtype]).float())


def greedy(model, prompt, n):
    ids = list(prompt)
    for _ in range(n):
        logits = model(torch.tensor([ids]))
        ids.append(int(logits[0, -1].argmax()))
    return ids[len(prompt):]


def make(out_dir, name, cfg, dtype, seed, shards=1, extra_files=None):
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    model = Llama(cfg)
    randomize(model, dtype, seed)
    sd = {k: v for k, v in model.state_dict().items()}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    if shards == 1:
        write_safetensors(os.path.join(d, "model.safetensors"), sd, lambda _: dtype)
    else:
        names = sorted(sd)
        parts = [names[i::shards] for i in range(shards)]
        weight_map, total = {}, 0
        for i, part in enumerate(parts):
            file = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
            write_safetensors(os.path.join(d, file), {k: sd[k] for k in part}, lambda _: dtype)
            for k in part:
                weight_map[k] = file
                total += sd[k].numel() * (4 if dtype == "F32" else 2)
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    for file, write in (extra_files or {}).items():
        write(os.path.join(d, file))

    v = cfg["vocab_size"]
    g = torch.Generator().manual_seed(seed + 1)
    t = 7
    ids = torch.randint(0, v, (2, t), generator=g)
    mask = torch.ones(2, t, dtype=torch.int64)
    mask[1, :2] = 0  # row 1: two pads on the left
    ids[1, :2] = 0
    with torch.no_grad():
        logits = model(ids, mask)
        prompt = ids[0, :4].tolist()
        cont = greedy(model, prompt, 8)
    write_safetensors(os.path.join(out_dir, f"{name}_expected.safetensors"),
                      {"input_ids": ids, "attention_mask": mask, "logits": logits,
                       "greedy_prompt": torch.tensor(prompt), "greedy_ids": torch.tensor(cont)},
                      lambda k: "F32" if k == "logits" else "I64")
    print(f"{name}: {sum(p.numel() for p in model.parameters())} parameters ({dtype}), greedy {prompt} -> {cont}")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/llama"
    os.makedirs(out, exist_ok=True)
    base = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
            "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "max_position_embeddings": 64,
            "initializer_range": 0.02, "torch_dtype": "float32"}
    make(out, "tiny", dict(base, vocab_size=272, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, rope_scaling=None,
                           tie_word_embeddings=False, bos_token_id=270, eos_token_id=271,
                           torch_dtype="bfloat16"),
         "BF16", 1,
         extra_files={"tokenizer.json": write_tokenizer,
                      "tokenizer_config.json": write_tokenizer_config,
                      "generation_config.json": lambda p: json.dump(
                          {"bos_token_id": 270, "eos_token_id": [271], "do_sample": False}, open(p, "w"))})
    make(out, "tiny_sharded", dict(base, vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, head_dim=8, rope_theta=500000.0,
                                   rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                 "high_freq_factor": 4.0, "original_max_position_embeddings": 16},
                                   tie_word_embeddings=True, bos_token_id=[1], eos_token_id=[2, 3],
                                   torch_dtype="float16"),
         "F16", 2, shards=2)
    make(out, "tiny_linear", dict(base, vocab_size=96, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                  num_attention_heads=2, head_dim=12, rope_scaling={"type": "linear", "factor": 2.0},
                                  attention_bias=True, mlp_bias=True, tie_word_embeddings=False,
                                  bos_token_id=1, eos_token_id=2),
         "F32", 3)


if __name__ == "__main__":
    main()
