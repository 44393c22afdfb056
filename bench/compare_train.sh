#!/usr/bin/env bash
# Runs skiff_train_bench and its PyTorch twin (bench/pytorch_train.py) on this
# machine, one after the other, and prints skiff/PyTorch time ratios per training
# step (forward + backward + AdamW; < 1 means skiff is faster).
#   bench/compare_train.sh [threads, default 1,2] [filter: crnn|gpt|resnet8]
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS="${1:-1,2}"
FILTER="${2:-}"
bench/setup_peer.sh >&2
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# Each (model, threads) pair runs skiff then PyTorch back to back, so a change in
# machine load between pairs affects both sides alike (check `uptime` first).
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for model in crnn gpt resnet8; do
  [[ -n "$FILTER" && "$model" != *"$FILTER"* ]] && continue
  for nt in ${THREADS//,/ }; do
    build/bin/skiff_train_bench --threads-list "$nt" --filter "$model" --json >> "$OUT/skiff.jsonl"
    /usr/bin/python3 bench/pytorch_train.py "$nt" "$model" >> "$OUT/torch.jsonl"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
/usr/bin/python3 - "$OUT/skiff.jsonl" "$OUT/torch.jsonl" <<'PY'
import json, sys
load = lambda p: {(r["bench"], r["threads"]): r for r in map(json.loads, open(p))}
s, t = load(sys.argv[1]), load(sys.argv[2])
print(f"{'train step':<12}{'thr':>4}{'skiff ms':>11}{'torch ms':>11}{'ratio':>8}")
for key in sorted(s, key=lambda k: (k[1], k[0])):
    if key in t:
        a, b = s[key]["seconds"], t[key]["seconds"]
        print(f"{key[0]:<12}{key[1]:>4}{a*1e3:>11.1f}{b*1e3:>11.1f}{a/b:>8.2f}")
PY
