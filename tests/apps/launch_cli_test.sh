#!/usr/bin/env bash
# `skiff launch` with skiff train as a user runs it: 2 ranks with batch B give the weights of
# one process with batch 2B, a failing rank stops the group with its exit code and error,
# and a rank killed mid-run leaves a checkpoint the next launch resumes from.
# Usage: launch_cli_test.sh SKIFF_BINARY REPO_ROOT
set -u
SKIFF="$1"
ROOT="$2"
source "$(dirname "$0")/check.sh"
export SKIFF_NUM_THREADS=1

# A small Fourier neural operator run (no batch norm, no dropout: data parallelism is exact).
FNO=(-c "$ROOT/configs/science/fno_burgers.yml" -o data.train_samples=48 -o data.test_samples=8 -o data.grid=64
     -o data.solver_grid=64 -o model.modes=8 -o model.width=16 -o model.layers=2 -o model.projection=32
     -o Global.print_batch_step=2)

"$SKIFF" launch --help >"$TMP/help.txt"; rc=$?
check "help: exit 0" test "$rc" -eq 0
check "help: explains the rank environment" grep -q "SKIFF_WORLD_SIZE" "$TMP/help.txt"
"$SKIFF" launch --nproc_per_node 2 2>"$TMP/nocmd.err"; rc=$?
check "no command: exit 2" test "$rc" -eq 2
"$SKIFF" launch --nnodes 2 --nproc_per_node 1 -- true 2>"$TMP/nomaster.err"; rc=$?
check "several nodes without --master: exit 2" test "$rc" -eq 2
check "several nodes without --master: says so" grep -q "needs --master" "$TMP/nomaster.err"

# Equivalence: 2 ranks x batch 4 against 1 process x batch 8.
"$SKIFF" train "${FNO[@]}" -o Global.epoch_num=2 -o train.batch_size=8 -o Global.save_model_dir="$TMP/one" \
  >"$TMP/one.out" 2>&1; rc=$?
check "one process: exit 0" test "$rc" -eq 0
"$SKIFF" launch --nproc_per_node 2 --log_dir "$TMP/logs" -- skiff train "${FNO[@]}" -o Global.epoch_num=2 \
  -o train.batch_size=4 -o Global.save_model_dir="$TMP/two" >"$TMP/two.out" 2>"$TMP/two.err"; rc=$?
check "two ranks: exit 0" test "$rc" -eq 0
check "two ranks: rank 0's output shown" grep -q "^done: 12 steps" "$TMP/two.err"
check "two ranks: a log per rank" test -s "$TMP/logs/rank_0.log" -a -s "$TMP/logs/rank_1.log"
check "two ranks: rank 1 trained too" grep -q "^done: 12 steps" "$TMP/logs/rank_1.log"
check "two ranks: only rank 0 wrote the run" test ! -e "$TMP/two/rank_1" -a "$(ls "$TMP/two/checkpoints" | wc -l)" -ge 1
compare() {
  python3 - "$@" <<'PY'
import json, struct, sys
from array import array
def load(p):
    b = open(p, 'rb').read()
    n = struct.unpack('<Q', b[:8])[0]
    h = json.loads(b[8:8 + n]); out = {}
    for k, v in h.items():
        if k == '__metadata__': continue
        s, e = v['data_offsets']
        a = array({'F32': 'f', 'F64': 'd', 'I64': 'q'}[v['dtype']]); a.frombytes(b[8 + n + s:8 + n + e]); out[k] = a
    return out
a, b = load(sys.argv[1]), load(sys.argv[2])
diffs = [abs(x - y) for k in a for x, y in zip(a[k], b[k])]
d = float("inf") if any(v != v for v in diffs) else max(diffs, default=0.0)  # NaN: never equal
print(f"  {len(a)} tensors, max |diff| {d:.3g}")
sys.exit(0 if a.keys() == b.keys() and d <= float(sys.argv[3]) else 1)
PY
}
check "two ranks x batch 4 = one process x batch 8 (weights within 1e-5)" \
  compare "$TMP/one/latest_model.safetensors" "$TMP/two/latest_model.safetensors" 1e-5
check "two ranks: the same logged losses (mean over ranks)" test \
  "$(grep -o '"loss":[0-9.]\{8\}' "$TMP/one/metrics.jsonl")" = "$(grep -o '"loss":[0-9.]\{8\}' "$TMP/two/metrics.jsonl")"

# ZeRO stage 1 (for any recipe through --zero_stage): the same weights as plain data parallelism,
# each rank holding a share of the optimizer state, and a checkpoint with the whole state.
"$SKIFF" launch --nproc_per_node 2 --zero_stage 1 --log_dir "$TMP/zlogs" -- skiff train "${FNO[@]}" \
  -o Global.epoch_num=2 -o train.batch_size=4 -o Global.save_model_dir="$TMP/zero" >"$TMP/zero.out" 2>"$TMP/zero.err"; rc=$?
check "zero: exit 0" test "$rc" -eq 0
check "zero: rank 0 reports its share" grep -q "^ZeRO stage 1: rank 0 updates" "$TMP/zero.err"
check "zero: rank 1 reports its share" grep -q "^ZeRO stage 1: rank 1 updates" "$TMP/zlogs/rank_1.log"
check "zero: the weights of plain data parallelism" \
  compare "$TMP/two/latest_model.safetensors" "$TMP/zero/latest_model.safetensors" 0
check "zero: the checkpoint holds the whole optimizer state" \
  compare "$TMP/two/checkpoints/$(ls "$TMP/two/checkpoints" | tail -1)" "$TMP/zero/checkpoints/$(ls "$TMP/zero/checkpoints" | tail -1)" 0

# A failing rank: its code comes back, its error is shown, the other rank is stopped.
start=$(date +%s)
"$SKIFF" launch --nproc_per_node 2 --log_dir "$TMP/fail" -- \
  sh -c 'if [ "$SKIFF_RANK" = 1 ]; then echo "boom from rank 1" >&2; exit 7; fi; sleep 60' 2>"$TMP/fail.err"; rc=$?
check "failing rank: its exit code (7)" test "$rc" -eq 7
check "failing rank: named, with its log" grep -q "rank 1 exited with code 7" "$TMP/fail.err"
check "failing rank: its error shown" grep -q "boom from rank 1" "$TMP/fail.err"
check "failing rank: the others stopped at once" test $(( $(date +%s) - start )) -lt 20

# A rank killed mid-run: rank 0 stops with a clear error, the checkpoint stays, and a new
# launch resumes from it on the same number of ranks.
"$SKIFF" launch --nproc_per_node 2 --timeout 20 --log_dir "$TMP/klogs" -- skiff train "${FNO[@]}" \
  -o Global.epoch_num=5000 -o train.batch_size=4 -o Global.save_model_dir="$TMP/killed" \
  >"$TMP/killed.out" 2>"$TMP/killed.err" &
launcher=$!
for _ in $(seq 300); do
  [ -n "$(ls "$TMP/killed/checkpoints" 2>/dev/null)" ] && break
  sleep 0.1
done
rank1=$(sed -n 's/^skiff launch: rank 1 is pid \([0-9]*\),.*/\1/p' "$TMP/killed.err")
check "killed rank: its pid was printed" test -n "$rank1"
[ -n "$rank1" ] && kill -9 "$rank1"
killed_at=$(date +%s)
wait "$launcher"; rc=$?
check "killed rank: the launch fails" test "$rc" -ne 0
check "killed rank: named" grep -q "rank 1 was killed" "$TMP/killed.err"
check "killed rank: rank 0 stopped within the timeout" test $(( $(date +%s) - killed_at )) -lt 30
# Whichever comes first: rank 0 finds the broken connection, or the launcher stops it.
check "killed rank: rank 0 fails or is stopped" grep -q -E "DistributedError: rank 0 of 2|stopping the other ranks" \
  "$TMP/killed.err"
last=$(ls "$TMP/killed/checkpoints" | tail -1)
step=$(echo "$last" | sed 's/ckpt-0*\([0-9]*\)\.safetensors/\1/')
check "killed rank: a checkpoint is left ($last)" test -n "$step"
"$SKIFF" launch --nproc_per_node 2 --log_dir "$TMP/rlogs" -- skiff train "${FNO[@]}" -o Global.epoch_num=5000 \
  -o train.batch_size=4 -o Global.save_model_dir="$TMP/killed" -o Global.max_steps=$((step + 6)) --resume \
  >"$TMP/resume.out" 2>"$TMP/resume.err"; rc=$?
check "resume on two ranks: exit 0" test "$rc" -eq 0
check "resume on two ranks: from the checkpoint" grep -q "resumed from .*$last at step $step" "$TMP/resume.err"
check "resume on two ranks: rank 1 resumed too" grep -q "resumed from .*$last at step $step" "$TMP/rlogs/rank_1.log"
check "resume on two ranks: finished" grep -q "^done: $((step + 6)) steps" "$TMP/resume.err"
"$SKIFF" launch --nproc_per_node 2 --log_dir "$TMP/flogs" -- skiff train "${FNO[@]}" -o Global.epoch_num=5000 \
  -o train.batch_size=4 -o Global.save_model_dir="$TMP/fresh" -o Global.max_steps=$((step + 6)) \
  >"$TMP/fresh.out" 2>"$TMP/fresh.err"; rc=$?
check "uninterrupted run to the same step: exit 0" test "$rc" -eq 0
check "resume is exact: the weights of the uninterrupted run" \
  compare "$TMP/killed/latest_model.safetensors" "$TMP/fresh/latest_model.safetensors" 0

exit $fails
