#!/usr/bin/env bash
# skiff train / eval / predict / export as a user runs them, on a small CRNN
# recipe (configs/ocr/rec_crnn_en.yml with a tiny network and a few steps), then
# skiff ocr with the exported recognizer directory (pulls the detector from the zoo).
# Usage: train_cli_test.sh SKIFF_BINARY SOURCE_DIR
set -u
SKIFF="$(realpath "$1")"
SRC="$2"
source "$(dirname "$0")/check.sh"
cd "$TMP"
RECIPE="$SRC/configs/ocr/rec_crnn_en.yml"
printf 'AB-1234\nmilk 2.50\nTEA 42\n12/05/2024\nbox 7\nKEY 19\n' >texts.txt
"$SKIFF" ocr synth data/rec_en/train --count 10 --seed 1 --texts texts.txt 2>/dev/null
"$SKIFF" ocr synth data/rec_en/eval --count 3 --seed 2 --texts texts.txt 2>/dev/null
SMALL=(-o Global.character_dict_path="$SRC/configs/ocr/data/en_dict.txt" -o Global.max_steps=6
       -o Global.print_batch_step=2 -o 'Global.eval_batch_step=[0, 3]' -o Train.loader.batch_size_per_card=8
       -o 'Architecture.Backbone.channels=[8, 16, 16, 32, 32, 32]' -o Architecture.Neck.hidden_size=16)

"$SKIFF" train -c "$RECIPE" "${SMALL[@]}" >train.out 2>train.err; rc=$?
check "train: exit 0" test "$rc" -eq 0
check "train: logs steps" grep -q "step 6/6 loss" train.err
check "train: evaluates" grep -q "eval step 3: acc" train.err
for f in train.log metrics.jsonl best_model.safetensors latest_model.safetensors curves.png config.yml; do
  check "train: wrote $f" test -s "output/rec_crnn_en/$f"
done
check "train: TensorBoard events" bash -c 'ls output/rec_crnn_en/events.out.tfevents.* >/dev/null'
check "train: checkpoints" bash -c 'ls output/rec_crnn_en/checkpoints/ckpt-*.safetensors >/dev/null'

"$SKIFF" train -c "$RECIPE" "${SMALL[@]}" -o Global.max_steps=8 --resume >resume.out 2>resume.err; rc=$?
check "train --resume: exit 0" test "$rc" -eq 0
check "train --resume: continues at step 6" grep -q "resumed from .*ckpt-0000000006.safetensors at step 6" resume.err
check "train --resume: ends at step 8" grep -q "done: 8 steps" resume.err

"$SKIFF" eval -c "$RECIPE" "${SMALL[@]}" --json >eval.out 2>eval.err; rc=$?
check "eval: exit 0" test "$rc" -eq 0
check "eval: prints acc and norm_edit_dis" grep -q '"acc":.*"norm_edit_dis":' eval.out

CROP="data/rec_en/eval/crops/img_00000_000.jpg"
"$SKIFF" predict -c "$RECIPE" "${SMALL[@]}" --image "$CROP" >predict.out 2>predict.err; rc=$?
check "predict: exit 0" test "$rc" -eq 0
check "predict: image<TAB>text<TAB>score" grep -qP "^\Q$CROP\E\t.*\t[0-9.]+\$" predict.out

"$SKIFF" export -c "$RECIPE" "${SMALL[@]}" --output exported >export.out 2>export.err; rc=$?
check "export: exit 0" test "$rc" -eq 0
check "export: inference.onnx" test -s exported/inference.onnx
check "export: inference.yml with the dictionary" grep -q "character_dict:" exported/inference.yml
check "export: checks ONNX against eager" grep -q "ONNX vs eager: max abs diff" export.err

# The OCR command with the exported directory: the recognizer's dictionary comes from
# inference.yml (only characters of en_dict.txt can appear), the detector from the zoo.
"$SKIFF" ocr --text_recognition_model_dir exported --text_rec_score_thresh 0 data/rec_en/eval/img_00000.jpg \
  >ocr.out 2>ocr.err; rc=$?
check "ocr with the export: exit 0" test "$rc" -eq 0
check "ocr with the export: reads lines" test -s ocr.out
check "ocr with the export: only dictionary characters" bash -c "! grep -qP '[^0-9A-Za-z\-./:%#,\$+() ]' ocr.out"

# Errors stop the run before any work, naming file, line and key.
"$SKIFF" train -c "$RECIPE" "${SMALL[@]}" -o Optimizer.lr.learning_rat=0.1 >/dev/null 2>err1.txt; rc=$?
check "typo: non-zero exit" test "$rc" -ne 0
check "typo: names the key and the fix" grep -qF "rec_crnn_en.yml: Optimizer.lr.learning_rat (set with -o): unknown key; did you mean 'learning_rate'?" err1.txt
"$SKIFF" train -c "$RECIPE" "${SMALL[@]}" -o Train.dataset.data_dir=nowhere >/dev/null 2>err2.txt; rc=$?
check "missing data: non-zero exit" test "$rc" -ne 0
check "missing data: names the file" grep -q "Train.dataset.data_dir: file 'nowhere' does not exist" err2.txt
"$SKIFF" train -c "$RECIPE" "${SMALL[@]}" --resume "$TMP/none.safetensors" >/dev/null 2>err3.txt; rc=$?
check "bad --resume: non-zero exit" test "$rc" -ne 0
check "bad --resume: names the file" grep -q "none.safetensors" err3.txt

exit $((fails > 0))
