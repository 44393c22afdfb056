#!/usr/bin/env bash
# Runs `skiff bench pinn` and the same PINN steps in PyTorch on this machine, one
# after the other, and prints skiff/PyTorch time ratios (< 1 means skiff is faster).
#   bench/compare_pinn.sh [threads, default 1,2]
# Rows: skiff's default (Taylor-mode) step against PyTorch's usual nested-autograd
# step and against the same Taylor-mode algorithm written in PyTorch, and skiff's
# nested-autograd step against PyTorch's.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS="${1:-1,2}"
bench/setup_peer.sh >&2
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
build/bin/skiff bench pinn --threads-list "$THREADS" --json > "$OUT/skiff.jsonl"
/usr/bin/python3 bench/pytorch_pinn.py "$THREADS" > "$OUT/torch.jsonl"
/usr/bin/python3 - "$OUT/skiff.jsonl" "$OUT/torch.jsonl" <<'PY'
import json, sys
load = lambda p: {(r["bench"], r["threads"]): r["seconds"] for r in map(json.loads, open(p))}
s, t = load(sys.argv[1]), load(sys.argv[2])
rows = []
for (name, thr), sec in sorted(s.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    base = name.replace("_autograd", "")
    if name.endswith("_autograd"):
        rows.append((f"{base} autograd vs torch nested", thr, sec, t.get((base, thr))))
    else:
        rows.append((f"{base} vs torch nested", thr, sec, t.get((base, thr))))
        rows.append((f"{base} vs torch jet", thr, sec, t.get((base + "_jet", thr))))
print(f"{'case':<44}{'thr':>4}{'skiff ms':>11}{'torch ms':>11}{'ratio':>8}")
for label, thr, a, b in rows:
    if b:
        print(f"{label:<44}{thr:>4}{a*1e3:>11.2f}{b*1e3:>11.2f}{a/b:>8.2f}")
PY
