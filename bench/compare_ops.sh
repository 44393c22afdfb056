#!/usr/bin/env bash
# Runs `skiff bench ops` and the same shapes in PyTorch on this machine, one after
# the other, and prints skiff/PyTorch time ratios (< 1 means skiff is faster).
#   bench/compare_ops.sh [threads, default 1,2]
#   env: BUILD_DIR (build), FILTER (only cases whose name contains it), CHECK=0 to
#        skip the check below.
# Before timing, both sides compute every case on the same inputs (skiff bench ops --check,
# pytorch_ops.py --check) and must agree on output shapes and checksums (gradients
# too for fwdbwd); a case that differs stops the script (exit 1). Rows only one side
# produced are listed, not dropped. The peer runs without this machine's
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE (bench/peer_env.sh) and prints its OpenBLAS core.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS="${1:-1,2}"
BUILD_DIR="${BUILD_DIR:-build}"
FILTER="${FILTER:-}"
source bench/peer_env.sh
bench/setup_peer.sh >&2
peer_blas_report compare_ops
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

if [ "${CHECK:-1}" != 0 ]; then
  echo "compare_ops: checking that both sides compute the same outputs" >&2
  "$BUILD_DIR/bin/skiff" bench ops --check ${FILTER:+--filter "$FILTER"} > "$OUT/skiff_check.jsonl"
  peer "$PEER_PYTHON" bench/pytorch_ops.py --check > "$OUT/torch_check.jsonl"
  "$PEER_PYTHON" - "$OUT/skiff_check.jsonl" "$OUT/torch_check.jsonl" "$FILTER" <<'PY' || exit 1
import json, sys
sys.path.insert(0, "bench")
from compare_rows import pair, same_summary
load = lambda p: {r["bench"]: r for r in map(json.loads, open(p)) if sys.argv[3] in r["bench"]}
s, t = load(sys.argv[1]), load(sys.argv[2])
common, missing = pair(s, t, "skiff", "PyTorch", "check")
bad = [f"{k}: only the {side} side computes it" for k, side in missing]
for k in common:
    for what, x, y in [("output", s[k], t[k])] + [(f"gradient {i}", gx, gy) for i, (gx, gy) in
                                                   enumerate(zip(s[k].get("grads", []), t[k].get("grads", [])))]:
        err = same_summary(x, y)
        if err:
            bad.append(f"{k} {what}: {err}")
    if len(s[k].get("grads", [])) != len(t[k].get("grads", [])):
        bad.append(f"{k}: gradient count differs")
for b in bad:
    print(f"compare_ops: MISMATCH {b}", file=sys.stderr)
if bad:
    print("compare_ops: the two sides do not compute the same thing; not timing them", file=sys.stderr)
    sys.exit(1)
print(f"compare_ops: {len(common)} cases agree (output shapes and checksums, gradients of fwdbwd)", file=sys.stderr)
PY
fi

"$BUILD_DIR/bin/skiff" bench ops --threads-list "$THREADS" ${FILTER:+--filter "$FILTER"} --json > "$OUT/skiff.jsonl"
peer "$PEER_PYTHON" bench/pytorch_ops.py "$THREADS" "$FILTER" > "$OUT/torch.jsonl"
"$PEER_PYTHON" - "$OUT/skiff.jsonl" "$OUT/torch.jsonl" "$FILTER" <<'PY'
import json, sys
sys.path.insert(0, "bench")
from compare_rows import pair
load = lambda p: {(r["bench"], r["threads"]): r for r in map(json.loads, open(p)) if sys.argv[3] in r["bench"]}
s, t = load(sys.argv[1]), load(sys.argv[2])
common, missing = pair(s, t, "skiff", "PyTorch")
print(f"{'benchmark':<22}{'thr':>4}{'skiff ms':>11}{'torch ms':>11}{'ratio':>8}  notes")
for key in sorted(set(s) | set(t), key=lambda k: (k[1], k[0])):
    a, b = s.get(key), t.get(key)
    if a is None or b is None:
        has = "skiff" if a else "PyTorch"
        ms = (a or b)["seconds"] * 1e3
        print(f"{key[0]:<22}{key[1]:>4}{ms if a else float('nan'):>11.3f}{ms if b else float('nan'):>11.3f}{'-':>8}  "
              f"only {has} ran it")
        continue
    note = f"skiff {a['gflops']:.1f} vs torch {b['gflops']:.1f} GFLOP/s" if "gflops" in a and "gflops" in b else ""
    print(f"{key[0]:<22}{key[1]:>4}{a['seconds']*1e3:>11.3f}{b['seconds']*1e3:>11.3f}{a['seconds']/b['seconds']:>8.2f}  {note}")
if missing:
    print(f"{len(missing)} row(s) ran on one side only (listed above)")
PY
