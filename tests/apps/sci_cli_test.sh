#!/usr/bin/env bash
# `skiff sci train / eval / query` as a user runs them: files written, figures,
# exit codes and error messages. Usage: sci_cli_test.sh SKIFF_BINARY REPO_ROOT
set -u
SKIFF="$1"
ROOT="$2"
source "$(dirname "$0")/check.sh"

# A shortened plate run from the shipped recipe.
"$SKIFF" --threads 1 sci train -c "$ROOT/configs/science/plate_bending.yml" -o model.hidden=[16,16] \
  -o sampling.interior=300 -o sampling.boundary=80 -o train.adam.iterations=60 -o train.lbfgs.iterations=40 \
  -o Global.print_batch_step=20 -o eval.grid=[21,31] --output "$TMP/plate" >"$TMP/train.txt" 2>"$TMP/train.err"; rc=$?
check "train: exit 0" test "$rc" -eq 0
for f in metrics.json solution.safetensors w.png Mx.png My.png; do
  check "train: wrote $f" test -s "$TMP/plate/$f"
done
check "train: progress on stderr" grep -q "^adam step 20/62 loss" "$TMP/train.err"
check "train: evaluations on stderr" grep -q "^eval step 62: .*rel_l2" "$TMP/train.err"
for f in metrics.jsonl train.log best_model.safetensors curves.png checkpoints/ckpt-0000000062.safetensors; do
  check "train: the run's records: $f" test -s "$TMP/plate/$f"
done
check "train: summary names w, Mx, My" grep -q "^Mx .*rel L2" "$TMP/train.txt"
check "metrics: centre deflection reference" grep -q '"centre_w_reference": 0.0042993' "$TMP/plate/metrics.json"

"$SKIFF" sci eval --model "$TMP/plate/solution.safetensors" --json >"$TMP/eval.json"; rc=$?
check "eval: exit 0" test "$rc" -eq 0
check "eval: same rel L2 as training" python3 - "$TMP/eval.json" "$TMP/plate/metrics.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))["evaluation"]
sys.exit(0 if abs(e["fields"]["w"]["rel_l2"] - m["fields"]["w"]["rel_l2"]) < 1e-12 else 1)
PY

"$SKIFF" sci query --model "$TMP/plate/solution.safetensors" --points 1,1.5 --points 0,0 >"$TMP/q.csv"; rc=$?
check "query: exit 0" test "$rc" -eq 0
check "query: header" grep -qx "x,y,w,Mx,My" "$TMP/q.csv"
check "query: two rows" test "$(wc -l <"$TMP/q.csv")" -eq 3
"$SKIFF" sci query --model "$TMP/plate/solution.safetensors" --grid 3,4 --csv "$TMP/g.csv" >/dev/null
check "query: grid csv has 12 rows" test "$(wc -l <"$TMP/g.csv")" -eq 13

# A time-dependent problem (heat, Neumann end): field image plus snapshots.
"$SKIFF" --threads 1 sci train -c "$ROOT/configs/science/heat.yml" -o model.hidden=[12,12] -o sampling.interior=200 \
  -o sampling.boundary=40 -o sampling.initial=40 -o train.adam.iterations=50 -o train.lbfgs.iterations=30 \
  -o eval.grid=[21,11] -q --output "$TMP/heat" >"$TMP/heat.txt" 2>&1; rc=$?
check "heat: exit 0" test "$rc" -eq 0
for f in u.png u_snapshots.png; do check "heat: wrote $f" test -s "$TMP/heat/$f"; done
check "heat: metrics list both images" python3 - "$TMP/heat/metrics.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
sys.exit(0 if sorted(p.split("/")[-1] for p in m["images"]) == ["u.png", "u_snapshots.png"] else 1)
PY

# The suite-independent commands run the same recipes (task: pinn): skiff train / eval / predict.
HEAT=(-o model.hidden=[12,12] -o sampling.interior=200 -o sampling.boundary=40 -o sampling.initial=40
      -o train.adam.iterations=50 -o train.lbfgs.iterations=30 -o eval.grid=[21,11] -o Global.save_model_dir="$TMP/heat2")
"$SKIFF" --threads 1 train -c "$ROOT/configs/science/heat.yml" "${HEAT[@]}" -q >"$TMP/heat2.txt" 2>&1; rc=$?
check "skiff train (pinn): exit 0" test "$rc" -eq 0
check "skiff train (pinn): wrote the solution" test -s "$TMP/heat2/solution.safetensors"
"$SKIFF" --threads 1 eval -c "$ROOT/configs/science/heat.yml" "${HEAT[@]}" --json >"$TMP/heat2_eval.json"; rc=$?
check "skiff eval (pinn): exit 0" test "$rc" -eq 0
check "skiff eval (pinn): the run's rel L2" python3 - "$TMP/heat2_eval.json" "$TMP/heat2/metrics.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))["evaluation"]
sys.exit(0 if abs(e["u rel_l2"] - m["fields"]["u"]["rel_l2"]) < 1e-12 else 1)
PY
"$SKIFF" --threads 1 predict -c "$ROOT/configs/science/heat.yml" "${HEAT[@]}" 0.5,0.25 1,1 >"$TMP/heat2_pred.txt"; rc=$?
check "skiff predict (pinn): exit 0" test "$rc" -eq 0
check "skiff predict (pinn): one line per point" grep -cqP '^(0.5,0.25|1,1)\tu=-?[0-9]' "$TMP/heat2_pred.txt"
check "skiff predict (pinn): two lines" test "$(wc -l <"$TMP/heat2_pred.txt")" -eq 2
check "skiff predict (pinn): same values as sci query" python3 - "$TMP/heat2_pred.txt" "$SKIFF" "$TMP/heat2/solution.safetensors" <<'PY'
import subprocess, sys
pred = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
q = subprocess.run([sys.argv[2], "--threads", "1", "sci", "query", "--model", sys.argv[3], "--points", "0.5,0.25",
                    "--points", "1,1"], capture_output=True, text=True, check=True).stdout.splitlines()[1:]
sys.exit(0 if [p[1] for p in pred] == ["u=" + r.split(",")[2] for r in q] else 1)
PY
# Stopped after 30 steps (inside Adam), then resumed to the end: the same solution as the straight run.
HEAT3=("${HEAT[@]}" -o Global.save_model_dir="$TMP/heat3")
"$SKIFF" --threads 1 train -c "$ROOT/configs/science/heat.yml" "${HEAT3[@]}" -o Global.max_steps=30 -q >/dev/null 2>&1
check "skiff train (pinn), stopped at step 30: checkpoint" test -s "$TMP/heat3/checkpoints/ckpt-0000000030.safetensors"
"$SKIFF" --threads 1 train -c "$ROOT/configs/science/heat.yml" "${HEAT3[@]}" --resume >/dev/null 2>"$TMP/resume.err"; rc=$?
check "skiff train --resume (pinn): exit 0" test "$rc" -eq 0
check "skiff train --resume (pinn): says where it resumed" grep -q "resumed from .*ckpt-0000000030.safetensors at step 30" "$TMP/resume.err"
"$SKIFF" --threads 1 predict -c "$ROOT/configs/science/heat.yml" "${HEAT3[@]}" 0.5,0.25 1,1 >"$TMP/heat3_pred.txt"
check "skiff train --resume (pinn): the straight run's solution exactly" cmp "$TMP/heat2_pred.txt" "$TMP/heat3_pred.txt"
"$SKIFF" --threads 1 sci train -c "$ROOT/configs/science/heat.yml" "${HEAT[@]}" --output "$TMP/heat4" --resume \
  >/dev/null 2>"$TMP/resume4.err"; rc=$?
check "sci train --resume with no checkpoint: exit 5, names the directory" grep -q "no checkpoint in .*heat4/checkpoints" "$TMP/resume4.err"
"$SKIFF" train -c "$ROOT/configs/science/heat.yml" -o output.dir="$TMP/x" >/dev/null 2>"$TMP/moved.err"; rc=$?
check "old layout key: exit 2, says where it moved" grep -q "output.dir moved to Global.save_model_dir" "$TMP/moved.err"
check "old layout key: exit 2" test "$rc" -eq 2
"$SKIFF" eval -c "$ROOT/configs/science/heat.yml" -o Global.save_model_dir="$TMP/none" >/dev/null 2>"$TMP/none.err"; rc=$?
check "skiff eval (pinn) before training: exit 5 and says train first" grep -q "no trained model at .*train first" "$TMP/none.err"
check "skiff eval (pinn) before training: exit 5" test "$rc" -eq 5
sed '/^task:/d' "$ROOT/configs/science/heat.yml" >"$TMP/notask.yml"
"$SKIFF" train -c "$TMP/notask.yml" >/dev/null 2>"$TMP/notask.err"; rc=$?
check "skiff train without a task: exit 2" test "$rc" -eq 2
check "skiff train without a task: lists the tasks" grep -q "names no task.*known: caption, causal_lm, clip, det, detection, masked_lm, operator, pinn, rec, text_classification" "$TMP/notask.err"

# A neural operator (task: operator): the shipped FNO recipe, shortened.
"$SKIFF" --threads 1 sci train -c "$ROOT/configs/science/fno_burgers.yml" -o data.train_samples=60 \
  -o data.test_samples=12 -o data.grid=32 -o data.solver_grid=128 -o data.dt=1.0e-3 -o model.width=8 \
  -o model.modes=6 -o model.layers=2 -o model.projection=16 -o Global.epoch_num=3 -o train.batch_size=10 \
  --output "$TMP/fno" >"$TMP/fno.txt" 2>"$TMP/fno.err"; rc=$?
check "fno: exit 0" test "$rc" -eq 0
for f in metrics.json model.safetensors samples.png; do check "fno: wrote $f" test -s "$TMP/fno/$f"; done
check "fno: evaluated after every epoch" test "$(grep -c "^eval step [0-9]*: rel_l2" "$TMP/fno.err")" -eq 3
check "fno: the run's records" test -s "$TMP/fno/checkpoints/ckpt-0000000018.safetensors"
check "fno: summary" grep -q "^u .*rel L2 .*12 held-out samples on 32 points" "$TMP/fno.txt"
"$SKIFF" sci eval --model "$TMP/fno/model.safetensors" --json >"$TMP/fno_eval.json"; rc=$?
check "fno eval: exit 0" test "$rc" -eq 0
check "fno eval: same error as training" python3 - "$TMP/fno_eval.json" "$TMP/fno/metrics.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))
ok = abs(e["mean_rel_l2"] - m["evaluation"]["mean_rel_l2"]) < 1e-12 and m["train"]["steps"] == 18
sys.exit(0 if ok else 1)
PY
"$SKIFF" sci eval --model "$TMP/fno/model.safetensors" --grid 64 >"$TMP/fno_fine.txt"; rc=$?
check "fno eval: finer grid" grep -q "on 64 points" "$TMP/fno_fine.txt"
"$SKIFF" sci eval --model "$TMP/fno/model.safetensors" --grid 48 >/dev/null 2>"$TMP/fno_grid.err"; rc=$?
check "fno eval: grid must divide the solver grid" grep -q "must divide the recipe's solver grid (128)" "$TMP/fno_grid.err"
"$SKIFF" sci query --model "$TMP/fno/model.safetensors" --points 0.5 >/dev/null 2>"$TMP/fno_q.err"; rc=$?
check "fno query: refused with a reason" grep -q "neural-operator model" "$TMP/fno_q.err"
"$SKIFF" eval -c "$ROOT/configs/science/fno_burgers.yml" -o Global.save_model_dir="$TMP/fno" --json >"$TMP/fno_eval2.json"; rc=$?
check "skiff eval (operator): exit 0" test "$rc" -eq 0
check "skiff eval (operator): the run's error" python3 - "$TMP/fno_eval2.json" "$TMP/fno/metrics.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))
sys.exit(0 if abs(e["u rel_l2"] - m["evaluation"]["mean_rel_l2"]) < 1e-12 and e["samples"] == 12 else 1)
PY
"$SKIFF" predict -c "$ROOT/configs/science/fno_burgers.yml" -o Global.save_model_dir="$TMP/fno" x >/dev/null 2>"$TMP/fno_p.err"; rc=$?
check "skiff predict (operator): not supported, exit 3, says what to use" grep -q "use skiff eval" "$TMP/fno_p.err"
"$SKIFF" sci train -c "$ROOT/configs/science/fno_burgers.yml" -o task=operater --output "$TMP/badtask" \
  >/dev/null 2>"$TMP/task.err"; rc=$?
check "unknown task: named" grep -q "unknown task 'operater'" "$TMP/task.err"

# Bad input: clear errors naming the input, non-zero exit, nothing half-written.
printf 'problem: {name: plate_bending}\nmodel: {hiden: [3]}\n' >"$TMP/typo.yml"
"$SKIFF" sci train -c "$TMP/typo.yml" --output "$TMP/typo" >/dev/null 2>"$TMP/typo.err"; rc=$?
check "typo: non-zero exit" test "$rc" -ne 0
check "typo: file, line, key and suggestion" grep -q "typo.yml:2: model.hiden: unknown key; did you mean 'hidden'?" "$TMP/typo.err"
check "typo: no output directory" test ! -e "$TMP/typo"
"$SKIFF" sci query --model "$TMP/plate/solution.safetensors" --points 5,5 >/dev/null 2>"$TMP/out.err"; rc=$?
check "outside point: error" grep -q "lies outside" "$TMP/out.err"
"$SKIFF" sci eval --model "$ROOT/configs/science/poisson.yml" >/dev/null 2>"$TMP/notst.err"; rc=$?
check "not a solution: non-zero exit" test "$rc" -ne 0
check "not a solution: names the file" grep -q "poisson.yml" "$TMP/notst.err"

echo "$fails failure(s)"
test "$fails" -eq 0
