#!/usr/bin/env bash
# Fine-tuning the zoo's NanoDet on synthetic shapes as a user runs it:
# skiff train / eval / export -c configs/detection/nanodet_finetune_synth.yml on a
# two-step schedule, then skiff det --model_dir on the export (pulls the model on first use).
# Usage: nanodet_finetune_cli_test.sh SKIFF_BINARY SOURCE_DIR
set -u
SKIFF="$1"
SRC="$2"
source "$(dirname "$0")/check.sh"
RECIPE="$SRC/configs/detection/nanodet_finetune_synth.yml"
cd "$TMP"
"$SKIFF" det synth data/shapes/train --count 8 --seed 1 --size 160 -q >/dev/null 2>&1
"$SKIFF" det synth data/shapes/val --count 4 --seed 2 --size 160 -q >/dev/null 2>&1
SHORT=(-o epoch=1 -o TrainReader.batch_size=4 -o LearningRate.schedulers.0.max_epochs=1 -o EvalReader.batch_size=4)

"$SKIFF" train -c "$RECIPE" "${SHORT[@]}" >"$TMP/train.txt" 2>&1; rc=$?
check "train: exit 0" test "$rc" -eq 0
check "train: 2 steps (1 epoch of 2 batches)" grep -q 'training 2 full-batch steps' "$TMP/train.txt"
check "train: evaluates COCO mAP" grep -Eq 'eval step 2: .*mAP [0-9.e-]+' "$TMP/train.txt"
check "train: weights" test -s output/nanodet_finetune_synth/best_model.safetensors

"$SKIFF" export -c "$RECIPE" "${SHORT[@]}" >"$TMP/export.txt" 2>&1; rc=$?
check "export: exit 0" test "$rc" -eq 0
check "export: equals the eager model" python3 -c '
import re, sys
m = re.search(r"max abs diff ([0-9.e+-]+)", open(sys.argv[1]).read())
assert m and float(m.group(1)) < 1e-4, m
' "$TMP/export.txt"
check "export: arch and labels" grep -q 'arch: NanoDet' output/nanodet_finetune_synth/inference/inference.yml

# skiff det reads the export: the synthetic set's labels, RGB preprocessing from inference.yml.
"$SKIFF" det data/shapes/val/images/000000.jpg --model_dir output/nanodet_finetune_synth/inference --threshold 0 --topk 5 --json >"$TMP/det.json" 2>"$TMP/det_err.txt"; rc=$?
check "det --model_dir: exit 0" test "$rc" -eq 0
check "det --model_dir: 5 boxes labelled with the synthetic classes" python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).read())
names = {"circle", "square", "triangle", "star", "ring", "cross", "diamond", "hexagon", "arrow", "crescent"}
assert len(r["boxes"]) == 5, r
assert all(b["label"] in names for b in r["boxes"]), r
' "$TMP/det.json"

"$SKIFF" det data/shapes/val/images/000000.jpg --model_dir "$TMP/nowhere" >/dev/null 2>"$TMP/det_missing.txt"; rc=$?
check "det --model_dir missing: exit 5 (I/O)" test "$rc" -eq 5
check "det --model_dir missing: names the file" grep -q 'nowhere: no inference.onnx' "$TMP/det_missing.txt"

[ "$fails" -eq 0 ] && echo "all checks passed" || { echo "$fails check(s) failed"; exit 1; }
