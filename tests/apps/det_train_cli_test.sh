#!/usr/bin/env bash
# skiff train / eval / predict / export as a user runs them on the DB detector
# recipe (configs/ocr/det_db_synth.yml with small crops and a few steps), then
# skiff ocr with the exported detector directory (pulls the recognizer from the zoo).
# Usage: det_train_cli_test.sh SKIFF_BINARY SOURCE_DIR
set -u
SKIFF="$(realpath "$1")"
SRC="$(realpath "$2")"
source "$(dirname "$0")/check.sh"
cd "$TMP"
RECIPE="$SRC/configs/ocr/det_db_synth.yml"
"$SKIFF" ocr synth data/det_synth/train --count 8 --seed 1 >/dev/null 2>&1
"$SKIFF" ocr synth data/det_synth/eval --count 2 --seed 2 >/dev/null 2>&1
SMALL=(-o Global.max_steps=6 -o Global.print_batch_step=2 -o 'Global.eval_batch_step=[0, 3]'
       -o Train.loader.batch_size_per_card=4 -o 'Train.dataset.transforms.3.EastRandomCropData.size=[128, 128]'
       -o 'Architecture.Backbone.channels=[8, 8, 16, 16, 32]' -o Architecture.Neck.out_channels=16)

"$SKIFF" train -c "$RECIPE" "${SMALL[@]}" >train.out 2>train.err; rc=$?
check "train: exit 0" test "$rc" -eq 0
check "train: logs steps" grep -q "step 6/6 loss" train.err
check "train: evaluates hmean" grep -q "eval step 3: hmean [0-9.]* precision [0-9.]* recall" train.err
for f in train.log metrics.jsonl best_model.safetensors latest_model.safetensors curves.png config.yml; do
  check "train: wrote $f" test -s "output/det_db_synth/$f"
done

"$SKIFF" train -c "$RECIPE" "${SMALL[@]}" -o Global.max_steps=8 --resume >resume.out 2>resume.err; rc=$?
check "train --resume: exit 0" test "$rc" -eq 0
check "train --resume: continues at step 6" grep -q "resumed from .*ckpt-0000000006.safetensors at step 6" resume.err

"$SKIFF" eval -c "$RECIPE" "${SMALL[@]}" --json >eval.out 2>eval.err; rc=$?
check "eval: exit 0" test "$rc" -eq 0
check "eval: prints hmean, precision, recall" grep -q '"hmean":.*"precision":.*"recall":.*"samples":2' eval.out

PAGE="data/det_synth/eval/img_00000.jpg"
"$SKIFF" predict -c "$RECIPE" "${SMALL[@]}" --image "$PAGE" >predict.out 2>predict.err; rc=$?
check "predict: exit 0" test "$rc" -eq 0
check "predict: image<TAB>JSON boxes" grep -qP "^\Q$PAGE\E\t\[" predict.out
"$SKIFF" predict -c "$RECIPE" "${SMALL[@]}" --image "$PAGE" --save_path vis >/dev/null 2>&1; rc=$?
check "predict --save_path: exit 0" test "$rc" -eq 0
check "predict --save_path: a JPEG with the boxes" bash -c "head -c 3 vis/det_res_img_00000.jpg | od -An -tx1 | grep -q 'ff d8 ff'"

"$SKIFF" export -c "$RECIPE" "${SMALL[@]}" --output exported >export.out 2>export.err; rc=$?
check "export: exit 0" test "$rc" -eq 0
check "export: inference.onnx" test -s exported/inference.onnx
check "export: inference.yml with the size rule" grep -q "limit_side_len: 352" exported/inference.yml
check "export: inference.yml with the thresholds" grep -q "box_thresh: 0.6" exported/inference.yml
check "export: checks ONNX against eager" grep -q "ONNX vs eager: max abs diff" export.err

# skiff ocr with the exported detector takes its thresholds from inference.yml (here
# box_thresh 0: every blob of this barely trained model is a box); a flag still wins.
"$SKIFF" export -c "$RECIPE" "${SMALL[@]}" -o PostProcess.box_thresh=0 --output lenient >/dev/null 2>&1
check "export: box_thresh 0 recorded" grep -q "box_thresh: 0$" lenient/inference.yml
"$SKIFF" ocr --text_detection_model_dir lenient --json "$PAGE" >ocr.out 2>ocr.err; rc=$?
check "ocr with the export: exit 0" test "$rc" -eq 0
check "ocr with the export: boxes at box_thresh 0" grep -q '"dt_polys":\[\[\[' ocr.out
"$SKIFF" ocr --text_detection_model_dir lenient --text_det_box_thresh 1.0 --json "$PAGE" >ocr1.out 2>&1; rc=$?
check "ocr: --text_det_box_thresh 1.0 wins over the export" grep -q '"dt_polys":\[\]' ocr1.out

# Errors name the key.
"$SKIFF" train -c "$RECIPE" -o 'Train.dataset.transforms.3.EastRandomCropData.size=[100, 100]' >/dev/null 2>err1.txt; rc=$?
check "bad crop size: non-zero exit" test "$rc" -ne 0
check "bad crop size: names the key" grep -q "EastRandomCropData.size: expected \[h, w\], multiples of 32" err1.txt
"$SKIFF" train -c "$RECIPE" -o Loss.name=DBLos >/dev/null 2>err2.txt; rc=$?
check "typo: names the fix" grep -q "unknown det loss 'DBLos'; did you mean 'DBLoss'?" err2.txt

exit $((fails > 0))
