#!/usr/bin/env bash
# Runs `skiff bench pinn` and the same PINN steps in PyTorch on this machine, one
# after the other, and prints skiff/PyTorch time ratios (< 1 means skiff is faster).
#   bench/compare_pinn.sh [threads, default 1,2]
# Rows: skiff's default (Taylor-mode) step against PyTorch's usual nested-autograd
# step and against the same Taylor-mode algorithm written in PyTorch, and skiff's
# nested-autograd step against PyTorch's. A row one side lacks is listed, not dropped.
# The peer runs without this machine's OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE
# (bench/peer_env.sh) and prints its OpenBLAS core.
#   env: BUILD_DIR (build)
# Not checked: that both sides compute the same loss (`skiff bench pinn` prints times only).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS="${1:-1,2}"
BUILD_DIR="${BUILD_DIR:-build}"
source bench/peer_env.sh
bench/setup_peer.sh >&2
peer_blas_report compare_pinn
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$BUILD_DIR/bin/skiff" bench pinn --threads-list "$THREADS" --json > "$OUT/skiff.jsonl"
peer "$PEER_PYTHON" bench/pytorch_pinn.py "$THREADS" > "$OUT/torch.jsonl"
"$PEER_PYTHON" - "$OUT/skiff.jsonl" "$OUT/torch.jsonl" <<'PY'
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
used = set()
for label, thr, a, b in rows:
    if b:
        print(f"{label:<44}{thr:>4}{a*1e3:>11.2f}{b*1e3:>11.2f}{a/b:>8.2f}")
    else:
        print(f"{label:<44}{thr:>4}{a*1e3:>11.2f}{'-':>11}{'-':>8}  no PyTorch row: not compared")
for (name, thr) in s:
    base = name.replace("_autograd", "")
    used |= {(base, thr)} | ({(base + "_jet", thr)} if not name.endswith("_autograd") else set())
for key in sorted(set(t) - used, key=lambda k: (k[1], k[0])):
    print(f"{key[0]:<44}{key[1]:>4}{'-':>11}{t[key]*1e3:>11.2f}{'-':>8}  no skiff row: not compared")
PY
