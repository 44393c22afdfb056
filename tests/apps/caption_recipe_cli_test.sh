#!/usr/bin/env bash
# The caption recipe as a user runs it (offline): synthetic captioned images, then
# skiff train / eval / predict / export -c configs/multimodal/caption_synth.yml on a tiny model
# and a short schedule (the loss must fall), and skiff mm caption on the exported model.
# Usage: caption_recipe_cli_test.sh SKIFF_BINARY SOURCE_DIR
set -u
SKIFF="$(realpath "$1")"
SRC="$(realpath "$2")"
source "$(dirname "$0")/check.sh"
RECIPE="$SRC/configs/multimodal/caption_synth.yml"
cd "$TMP"
"$SKIFF" mm synth data/mm --train 128 --val 12 --heldout 0 --size 32 --seed 4 -q >/dev/null 2>&1
SHORT=(-o Global.epoch_num=4 -o Global.print_batch_step=4 -o "Global.eval_batch_step=[0, 8]" -o Architecture.image_size=32
       -o "Architecture.vision.channels=[8, 16]" -o Architecture.decoder.width=32 -o Architecture.decoder.layers=1
       -o Architecture.decoder.heads=2 -o Train.loader.batch_size_per_card=16 -o Metric.beam=2)

"$SKIFF" train -c "$RECIPE" "${SHORT[@]}" >"$TMP/train.txt" 2>&1; rc=$?
check "train: exit 0" test "$rc" -eq 0
check "train: 32 steps (4 epochs of 8 batches)" grep -q 'training 32 full-batch steps' "$TMP/train.txt"
check "train: evaluates BLEU and CIDEr-D" grep -Eq 'eval step 32: .*bleu4 [0-9.]+ .*cider_d [0-9.]+' "$TMP/train.txt"
check "train: the loss falls" python3 -c '
import json, sys
losses = [r["loss"] for r in map(json.loads, open(sys.argv[1])) if "loss" in r and "eval" not in json.dumps(r)]
assert len(losses) >= 4 and losses[-1] < 0.8 * losses[0], losses
' output/caption_synth/metrics.jsonl
check "train: weights and captioner.json" test -s output/caption_synth/best_model.safetensors -a -s output/caption_synth/captioner.json

"$SKIFF" eval -c "$RECIPE" "${SHORT[@]}" >"$TMP/eval.txt" 2>&1; rc=$?
check "eval: exit 0" test "$rc" -eq 0
for key in bleu1 bleu2 bleu3 bleu4 cider_d samples; do
  check "eval: $key" grep -Eq "^$key: [0-9.]+" "$TMP/eval.txt"
done

"$SKIFF" predict -c "$RECIPE" "${SHORT[@]}" data/mm/images/val_000000.png >"$TMP/pred.txt" 2>"$TMP/pred.err"; rc=$?
check "predict: a caption per image" bash -c "test $rc -eq 0 && grep -q '\"caption\"' '$TMP/pred.txt'"

"$SKIFF" export -c "$RECIPE" "${SHORT[@]}" >"$TMP/export.txt" 2>&1; rc=$?
check "export: exit 0" test "$rc" -eq 0
check "export: encoder.onnx, decoder.onnx, inference.yml" test -s output/caption_synth/inference/encoder.onnx -a -s output/caption_synth/inference/decoder.onnx -a -s output/caption_synth/inference/inference.yml
check "export: the ONNX graphs give the trained outputs" python3 -c '
import re, sys
m = re.search(r"max abs diff ([0-9.e+-]+)", open(sys.argv[1]).read())
assert m and float(m.group(1)) < 1e-4, m
' "$TMP/export.txt"
"$SKIFF" mm caption data/mm/images/val_000000.png data/mm/images/val_000001.png --model_dir output/caption_synth/inference \
  --json >"$TMP/cap.json" 2>"$TMP/cap.err"; rc=$?
check "mm caption: exit 0" test "$rc" -eq 0
check "mm caption --json: a caption of vocabulary words per image" python3 -c '
import json, sys
vocab = set(open(sys.argv[2]).read().split())
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 2, rows
for r in rows:
    assert r["input_path"].endswith(".png") and r["log_prob"] <= 0, r
    assert all(w in vocab for w in r["caption"].split()), r
' "$TMP/cap.json" data/mm/vocab.txt
"$SKIFF" mm caption data/mm/images/val_000000.png --model_dir output/caption_synth/inference --beam 1 >"$TMP/greedy.txt"; rc=$?
check "mm caption --beam 1 (greedy): a line" bash -c "test $rc -eq 0 && test \$(wc -l <'$TMP/greedy.txt') -eq 1"
"$SKIFF" mm caption data/mm/images/val_000000.png --model_dir nowhere >/dev/null 2>"$TMP/nodir.err"; rc=$?
check "mm caption without a model: names the directory" bash -c "test $rc -ne 0 && grep -q nowhere '$TMP/nodir.err'"

echo "$fails failure(s)"
test "$fails" -eq 0
