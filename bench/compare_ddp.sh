#!/usr/bin/env bash
# Data-parallel training against PyTorch DDP on this machine (issue 22's measurements):
# bench/ddp_bench.cpp and its twin bench/pytorch_ddp.py train the same MLP (784-1024-1024-10,
# batch 64 per rank, SGD with momentum) on 1 process and on 2 ranks of 1 thread each, and
# time float32 all-reduces of 1-64 MiB between the 2 ranks (Gloo over loopback on both
# sides: PyTorch's gloo backend is the peer for Gloo's own numbers). Prints per-step times,
# samples/s, scaling efficiency (2-rank samples/s over twice the 1-process samples/s) and
# skiff/PyTorch ratios (< 1: skiff faster). The peer runs with bench/peer_env.sh's settings.
#   bench/compare_ddp.sh            env: STEPS (30), RUNS (3: the median run of each side is kept)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/peer_env.sh
STEPS="${STEPS:-30}"
RUNS="${RUNS:-3}"
BENCH=build/bin/skiff_ddp_bench
SKIFF=build/bin/skiff
[ -x "$BENCH" ] && [ -x "$SKIFF" ] || { echo "compare_ddp: build skiff first (ninja -C build)" >&2; exit 2; }
bench/setup_peer.sh >&2
peer_blas_report compare_ddp
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

uptime >&2
for run in $(seq "$RUNS"); do
  echo "compare_ddp: run $run of $RUNS" >&2
  SKIFF_NUM_THREADS=1 "$BENCH" --steps "$STEPS" --sizes-mib 1 | sed 's/^/skiff\t/' >> "$OUT/rows"
  "$SKIFF" launch --nproc_per_node 2 --threads_per_proc 1 --log_dir "$OUT/logs" -- "$BENCH" --steps "$STEPS" \
    2>/dev/null | grep '^{' | sed 's/^/skiff\t/' >> "$OUT/rows"
  THREADS=1 peer "$PEER_PYTHON" bench/pytorch_ddp.py "$STEPS" | sed 's/^/torch\t/' >> "$OUT/rows"
  port=$(free_port)
  for r in 0 1; do
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=$r WORLD_SIZE=2 THREADS=1 \
      peer "$PEER_PYTHON" bench/pytorch_ddp.py "$STEPS" > "$OUT/torch_rank$r" 2>&1 &
  done
  wait
  grep '^{' "$OUT/torch_rank0" | sed 's/^/torch\t/' >> "$OUT/rows"
done
uptime >&2

/usr/bin/python3 - "$OUT/rows" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    side, js = line.rstrip("\n").split("\t", 1)
    r = json.loads(js)
    key = (side, r["what"], r["ranks"], r.get("mib"))
    rows.setdefault(key, []).append(r["step_ms"] if r["what"] == "train" else r["ms"])
med = {k: statistics.median(v) for k, v in rows.items()}
def ms(side, what, ranks, mib=None): return med.get((side, what, ranks, mib))
print("training step, MLP 784-1024-1024-10, batch 64 per rank, 1 thread per rank (median of runs)")
print(f"{'ranks':>5} {'skiff ms':>9} {'torch ms':>9} {'ratio':>6} {'skiff samples/s':>16} {'torch samples/s':>16}")
for n in (1, 2):
    a, b = ms("skiff", "train", n), ms("torch", "train", n)
    print(f"{n:>5} {a:9.2f} {b:9.2f} {a / b:6.2f} {64 * n / a * 1e3:16.0f} {64 * n / b * 1e3:16.0f}")
for side in ("skiff", "torch"):
    eff = ms(side, "train", 1) / ms(side, "train", 2)  # (2*64/t2) / (2 * 64/t1)
    print(f"scaling efficiency, 2 ranks: {side} {eff:.2f}")
print("\nall-reduce, float32 sum, 2 ranks on loopback (median of runs)")
print(f"{'MiB':>5} {'skiff ms':>9} {'torch ms':>9} {'ratio':>6} {'skiff GB/s':>11} {'torch GB/s':>11}")
for mib in (1, 4, 16, 64):
    a, b = ms("skiff", "allreduce", 2, mib), ms("torch", "allreduce", 2, mib)
    if a and b:
        print(f"{mib:>5} {a:9.2f} {b:9.2f} {a / b:6.2f} {mib * 1.048576 / a:11.2f} {mib * 1.048576 / b:11.2f}")
PY
