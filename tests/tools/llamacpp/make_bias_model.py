#!/usr/bin/env python3
"""Writes a model directory that exercises what tests/data/llama/tiny lacks: biases on
every projection, a head_dim other than hidden_size / heads, linear rope scaling and tied
embeddings. It is tests/data/llama/tiny_linear with its embedding padded (random rows,
seed 0) to the 272 tokens of tiny's tokenizer.json, which it borrows.
  make_bias_model.py SOURCE_DIR OUT_DIR
"""
import json
import os
import random
import shutil
import struct
import sys

src_dir, out_dir = sys.argv[1], sys.argv[2]
data_dir = os.path.join(src_dir, "tests/data/llama")
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(data_dir, "tiny_linear/model.safetensors"), "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    data = f.read()
random.seed(0)
tensors = {}
for name, info in header.items():
    if name == "__metadata__":
        continue
    assert info["dtype"] == "F32", name
    begin, end = info["data_offsets"]
    values = list(struct.unpack("<%df" % ((end - begin) // 4), data[begin:end]))
    shape = info["shape"]
    if name in ("model.embed_tokens.weight", "lm_head.weight"):
        values += [random.gauss(0, 0.5) for _ in range((272 - shape[0]) * shape[1])]
        shape = [272, shape[1]]
    tensors[name] = (shape, struct.pack("<%df" % len(values), *values))
out_header, offset = {}, 0
for name, (shape, blob) in tensors.items():
    out_header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(blob)]}
    offset += len(blob)
h = json.dumps(out_header).encode()
h += b" " * ((8 - len(h) % 8) % 8)
with open(os.path.join(out_dir, "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + b"".join(blob for _, blob in tensors.values()))
with open(os.path.join(data_dir, "tiny_linear/config.json")) as f:
    config = json.load(f)
config.update(vocab_size=272, bos_token_id=270, eos_token_id=271)
with open(os.path.join(out_dir, "config.json"), "w") as f:
    json.dump(config, f, indent=2)
shutil.copy(os.path.join(data_dir, "tiny/tokenizer.json"), out_dir)
