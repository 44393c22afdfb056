#!/usr/bin/env bash
# The clip recipe as a user runs it (offline): synthetic captioned images, then
# skiff train / eval / predict / export -c configs/multimodal/clip_synth.yml on a tiny model
# and a short schedule (the loss must fall), and a bad recipe key named with its file and line.
# Usage: clip_recipe_cli_test.sh SKIFF_BINARY SOURCE_DIR
set -u
SKIFF="$(realpath "$1")"
SRC="$(realpath "$2")"
source "$(dirname "$0")/check.sh"
RECIPE="$SRC/configs/multimodal/clip_synth.yml"
cd "$TMP"
"$SKIFF" mm synth data/mm --train 256 --val 0 --heldout 24 --size 32 --seed 3 -q >/dev/null 2>&1
SHORT=(-o Global.epoch_num=4 -o Global.print_batch_step=4 -o "Global.eval_batch_step=[0, 8]" -o Architecture.image_size=32
       -o "Architecture.vision.channels=[8, 16]"
       -o Architecture.text.width=32 -o Architecture.text.layers=1 -o Architecture.text.heads=2
       -o Architecture.embed_dim=16 -o Train.loader.batch_size_per_card=32)

"$SKIFF" train -c "$RECIPE" "${SHORT[@]}" >"$TMP/train.txt" 2>&1; rc=$?
check "train: exit 0" test "$rc" -eq 0
check "train: 32 steps (4 epochs of 8 batches)" grep -q 'training 32 full-batch steps' "$TMP/train.txt"
check "train: evaluates zero-shot accuracy and retrieval" grep -Eq 'eval step 32: .*t2i_r1 [0-9.]+ .*zero_shot_acc [0-9.]+' "$TMP/train.txt"
check "train: the loss falls" python3 -c '
import json, sys
losses = [r["loss"] for r in map(json.loads, open(sys.argv[1])) if "loss" in r and "eval" not in json.dumps(r)]
assert len(losses) >= 4 and losses[-1] < 0.8 * losses[0], losses
' output/clip_synth/metrics.jsonl
check "train: weights, clip.json and the merged recipe" test -s output/clip_synth/best_model.safetensors -a -s output/clip_synth/clip.json -a -s output/clip_synth/config.yml

"$SKIFF" eval -c "$RECIPE" "${SHORT[@]}" >"$TMP/eval.txt" 2>&1; rc=$?
check "eval: exit 0" test "$rc" -eq 0
for key in zero_shot_acc t2i_r1 t2i_r5 t2i_r10 i2t_r1 i2t_r5 i2t_r10 samples; do
  check "eval: $key" grep -Eq "^$key: [0-9.]+" "$TMP/eval.txt"
done

"$SKIFF" predict -c "$RECIPE" "${SHORT[@]}" data/mm/images/heldout_000000.png data/mm/images/heldout_000001.png >"$TMP/pred.txt" 2>"$TMP/pred.err"; rc=$?
check "predict: exit 0" test "$rc" -eq 0
check "predict: a class and a score per image" python3 -c '
import json, sys
classes = set(open(sys.argv[2]).read().split("\n")) - {""}
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, lines
for line in lines:
    path, result = line.split("\t")
    r = json.loads(result)
    assert r["label"] in classes and 0 < r["score"] <= 1, r
' "$TMP/pred.txt" data/mm/classes.txt
"$SKIFF" predict -c "$RECIPE" "${SHORT[@]}" data/mm/images/nope.png >/dev/null 2>"$TMP/pred_bad.err"; rc=$?
check "predict of a missing image: fails, names it" bash -c "test $rc -ne 0 && grep -q nope.png '$TMP/pred_bad.err'"

"$SKIFF" export -c "$RECIPE" "${SHORT[@]}" >"$TMP/export.txt" 2>&1; rc=$?
check "export: exit 0" test "$rc" -eq 0
check "export: weights, clip.json, vocab.txt" test -s output/clip_synth/inference/model.safetensors -a -s output/clip_synth/inference/clip.json -a -s output/clip_synth/inference/vocab.txt
check "export: both towers as ONNX and inference.yml" test -s output/clip_synth/inference/image_encoder.onnx -a -s output/clip_synth/inference/text_encoder.onnx -a -s output/clip_synth/inference/inference.yml
check "export: the ONNX towers give the trained embeddings" python3 -c '
import re, sys
m = re.search(r"max abs diff ([0-9.e+-]+)", open(sys.argv[1]).read())
assert m and float(m.group(1)) < 1e-4, m
' "$TMP/export.txt"
check "export: inference.yml says how to feed the towers" bash -c "grep -q 'context_length: 16' output/clip_synth/inference/inference.yml && grep -q 'channel_order: RGB' output/clip_synth/inference/inference.yml"

# The exported model in skiff mm zeroshot / embed / search.
M=(--model_dir output/clip_synth/inference)
"$SKIFF" mm zeroshot data/mm/images/heldout_000000.png data/mm/images/heldout_000001.png "${M[@]}" \
  --labels "red circle, blue circle ,yellow square" --topk 2 >"$TMP/zs.txt" 2>"$TMP/zs.err"; rc=$?
check "mm zeroshot: exit 0" test "$rc" -eq 0
check "mm zeroshot: per image the top 2 of the 3 labels, best first" python3 -c '
import sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, lines
for line in lines:
    f = line.split("\t")
    assert f[0].endswith(".png") and len(f) == 3, f
    labels = [x.rsplit(" ", 1) for x in f[1:]]
    assert all(l in ("red circle", "blue circle", "yellow square") for l, _ in labels), labels
    scores = [float(s) for _, s in labels]
    assert scores[0] >= scores[1] and 0 <= sum(scores) <= 1.0001, scores
' "$TMP/zs.txt"
"$SKIFF" mm zeroshot data/mm/images/heldout_000000.png "${M[@]}" --labels_file data/mm/classes.txt --json >"$TMP/zs.json"
check "mm zeroshot --json: 3 labels with scores" python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["input_path"].endswith("heldout_000000.png") and len(r["labels"]) == 3 and {"label", "score"} <= set(r["labels"][0])
' "$TMP/zs.json"
"$SKIFF" mm zeroshot data/mm/images/heldout_000000.png "${M[@]}" --labels "cat" >/dev/null 2>"$TMP/zs1.err"; rc=$?
check "mm zeroshot with one label: an error that says why" bash -c "test $rc -ne 0 && grep -q 'at least two class names' '$TMP/zs1.err'"
"$SKIFF" mm zeroshot data/mm/images/heldout_000000.png --model_dir nowhere --labels "a,b" >/dev/null 2>"$TMP/nodir.err"; rc=$?
check "mm zeroshot without a model: names the directory" bash -c "test $rc -ne 0 && grep -q nowhere '$TMP/nodir.err'"

"$SKIFF" mm embed --images data/mm/images/heldout_0000*.png "${M[@]}" --output index.safetensors 2>"$TMP/embed.err"; rc=$?
check "mm embed: exit 0 and a summary" bash -c "test $rc -eq 0 && grep -q 'wrote 24 image embeddings of 16 values to index.safetensors' '$TMP/embed.err'"
"$SKIFF" mm embed --text "a red star" --text "two green circles" "${M[@]}" --json >"$TMP/embed.json"
check "mm embed --json: unit vectors" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["item"] for r in rows] == ["a red star", "two green circles"]
for r in rows:
    assert len(r["embedding"]) == 16 and abs(sum(v * v for v in r["embedding"]) - 1) < 1e-4
' "$TMP/embed.json"
"$SKIFF" mm search index.safetensors "${M[@]}" --image data/mm/images/heldout_000003.png --topk 3 >"$TMP/search.txt"; rc=$?
check "mm search: exit 0" test "$rc" -eq 0
check "mm search: an image finds itself first" python3 -c '
import sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
assert [r[0] for r in rows] == ["1", "2", "3"] and rows[0][2].endswith("heldout_000003.png"), rows
assert abs(float(rows[0][1]) - 1) < 1e-4 and float(rows[0][1]) >= float(rows[1][1]) >= float(rows[2][1]), rows
' "$TMP/search.txt"
"$SKIFF" mm search index.safetensors "${M[@]}" --text "a red star" --topk 2 --json >"$TMP/search.json"; rc=$?
check "mm search --text --json: ranks" bash -c "test $rc -eq 0 && test \$(grep -c '\"rank\"' '$TMP/search.json') -eq 2"
"$SKIFF" mm search output/clip_synth/inference/model.safetensors "${M[@]}" --text "a" >/dev/null 2>"$TMP/noindex.err"; rc=$?
check "mm search on a non-index: says what it lacks" bash -c "test $rc -ne 0 && grep -q 'not an index from skiff mm embed' '$TMP/noindex.err'"

"$SKIFF" train -c "$RECIPE" "${SHORT[@]}" -o Architecture.vision.type=vit -o Architecture.patch_size=5 >/dev/null 2>"$TMP/bad.err"; rc=$?
check "a ViT patch size that does not divide the image: exit 2" test "$rc" -eq 2
check "... named with the recipe file" grep -q "clip_synth.yml" "$TMP/bad.err"
"$SKIFF" train -c "$RECIPE" "${SHORT[@]}" -o Train.dataset.captions=data/none.json >/dev/null 2>"$TMP/nodata.err"; rc=$?
check "missing caption file: names the key and the path" bash -c "test $rc -ne 0 && grep -q 'Train.dataset.captions' '$TMP/nodata.err' && grep -q 'data/none.json' '$TMP/nodata.err'"

echo "$fails failure(s)"
test "$fails" -eq 0
