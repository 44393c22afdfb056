#!/usr/bin/env bash
# Runs skiff_train_bench and its PyTorch twin (bench/pytorch_train.py) on this
# machine, one after the other, and prints skiff/PyTorch time ratios per training
# step (forward + backward + AdamW; < 1 means skiff is faster).
#   bench/compare_train.sh [threads, default 1,2] [filter: crnn|gpt|resnet8|picodet|encoder|clip]
#   env: BUILD_DIR (build)
# Both sides must train the same model: the report compares the number of trained
# parameters of each case and fails when they differ (a different tensor count alone is
# noted: PyTorch joins attention's q/k/v weights into one tensor); rows
# one side lacks are listed, not dropped. The peer runs without this machine's
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE (bench/peer_env.sh) and prints its OpenBLAS core.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS="${1:-1,2}"
FILTER="${2:-}"
BUILD_DIR="${BUILD_DIR:-build}"
source bench/peer_env.sh
bench/setup_peer.sh >&2
peer_blas_report compare_train
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# Each (model, threads) pair runs skiff then PyTorch back to back, so a change in
# machine load between pairs affects both sides alike (check `uptime` first).
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for model in crnn gpt resnet8 picodet encoder clip; do
  [[ -n "$FILTER" && "$model" != *"$FILTER"* ]] && continue
  for nt in ${THREADS//,/ }; do
    "$BUILD_DIR/bin/skiff_train_bench" --threads-list "$nt" --filter "$model" --json >> "$OUT/skiff.jsonl"
    peer "$PEER_PYTHON" bench/pytorch_train.py "$nt" "$model" >> "$OUT/torch.jsonl"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$PEER_PYTHON" - "$OUT/skiff.jsonl" "$OUT/torch.jsonl" <<'PY'
import json, sys
sys.path.insert(0, "bench")
from compare_rows import pair
load = lambda p: {(r["bench"], r["threads"]): r for r in map(json.loads, open(p))}
s, t = load(sys.argv[1]), load(sys.argv[2])
common, missing = pair(s, t, "skiff", "PyTorch")
print(f"{'train step':<12}{'thr':>4}{'skiff ms':>11}{'torch ms':>11}{'ratio':>8}  notes")
status = 0
for key in sorted(set(s) | set(t), key=lambda k: (k[1], k[0])):
    a, b = s.get(key), t.get(key)
    if a is None or b is None:
        r = a or b
        print(f"{key[0]:<12}{key[1]:>4}{(r['seconds']*1e3 if a else float('nan')):>11.1f}"
              f"{(r['seconds']*1e3 if b else float('nan')):>11.1f}{'-':>8}  only {'skiff' if a else 'PyTorch'} ran it")
        continue
    note = ""
    if a.get("params") != b.get("params"):
        note = (f"NOT THE SAME MODEL: skiff trains {a.get('params')} parameters in {a.get('param_tensors')} tensors, "
                f"PyTorch {b.get('params')} in {b.get('param_tensors')}")
        status = 1
    elif a.get("param_tensors") != b.get("param_tensors"):
        # The same parameters split into other tensors: attention's q, k, v weights are three
        # tensors in skiff and one in_proj_weight in PyTorch.
        note = (f"same {a.get('params')} parameters, in {a.get('param_tensors')} tensors (skiff) vs "
                f"{b.get('param_tensors')} (PyTorch: attention's q/k/v joined)")
    print(f"{key[0]:<12}{key[1]:>4}{a['seconds']*1e3:>11.1f}{b['seconds']*1e3:>11.1f}{a['seconds']/b['seconds']:>8.2f}  {note}")
sys.exit(status)
PY
