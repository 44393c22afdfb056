#!/usr/bin/env bash
# Runs `skiff bench ops` and the same shapes in PyTorch on this machine, one after
# the other, and prints skiff/PyTorch time ratios (< 1 means skiff is faster).
#   bench/compare_ops.sh [threads, default 1,2]
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS="${1:-1,2}"
bench/setup_peer.sh >&2
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
build/bin/skiff bench ops --threads-list "$THREADS" --json > "$OUT/skiff.jsonl"
/usr/bin/python3 bench/pytorch_ops.py "$THREADS" > "$OUT/torch.jsonl"
/usr/bin/python3 - "$OUT/skiff.jsonl" "$OUT/torch.jsonl" <<'PY'
import json, sys
load = lambda p: {(r["bench"], r["threads"]): r for r in map(json.loads, open(p))}
s, t = load(sys.argv[1]), load(sys.argv[2])
print(f"{'benchmark':<22}{'thr':>4}{'skiff ms':>11}{'torch ms':>11}{'ratio':>8}  notes")
for key in sorted(s, key=lambda k: (k[1], k[0])):
    if key not in t:
        continue
    a, b = s[key], t[key]
    note = f"skiff {a['gflops']:.1f} vs torch {b['gflops']:.1f} GFLOP/s" if "gflops" in a else ""
    print(f"{key[0]:<22}{key[1]:>4}{a['seconds']*1e3:>11.3f}{b['seconds']*1e3:>11.3f}{a['seconds']/b['seconds']:>8.2f}  {note}")
PY
