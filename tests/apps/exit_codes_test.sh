#!/usr/bin/env bash
# The exit codes of README.md's "Exit codes" table, provoked the way a user would.
# Needs no network: the zoo runs offline on an empty cache.
# Usage: exit_codes_test.sh SKIFF_BINARY SOURCE_DIR
set -u
SKIFF="$(realpath "$1")"
SRC="$(realpath "$2")"
source "$(dirname "$0")/check.sh"
cd "$TMP"
export SKIFF_HOME="$TMP/home" SKIFF_OFFLINE=1

# expect CODE NAME COMMAND...: runs it, stderr to NAME.err; checks the exit code.
expect() {
  local want="$1" name="$2"; shift 2
  "$@" >"$name.out" 2>"$name.err"
  local rc=$?
  check "$name: exit $want (got $rc)" test "$rc" -eq "$want"
}

# 0: success, also for --help and --version.
expect 0 version "$SKIFF" --version
expect 0 help "$SKIFF" --help
expect 0 sub_help "$SKIFF" zoo list --help

# 1: nothing found.
expect 1 search_none "$SKIFF" zoo search no-such-model-anywhere
check "search_none: prints nothing" test ! -s search_none.out

# 2: command-line mistakes (CLI11's own codes are 105, 106, 109: never shown to users).
expect 2 unknown_flag "$SKIFF" info --no-such-flag
check "unknown_flag: names the flag" grep -q -- "--no-such-flag" unknown_flag.err
expect 2 unknown_command "$SKIFF" ocx --help
check "unknown_command: did you mean" grep -qF "unknown command 'ocx' for 'skiff'; did you mean 'ocr'?" unknown_command.err
check "unknown_command: lists the commands" grep -q "the commands are: .*train" unknown_command.err
check "unknown_command: no help printed" test ! -s unknown_command.out
expect 2 unknown_subcommand "$SKIFF" --threads 1 zoo lst
check "unknown_subcommand: did you mean" grep -qF "unknown command 'lst' for 'skiff zoo'; did you mean 'list'?" unknown_subcommand.err
expect 2 missing_subcommand "$SKIFF" zoo
expect 2 missing_recipe "$SKIFF" train -c no_such_recipe.yml
check "missing_recipe: names the file" grep -q "no_such_recipe.yml" missing_recipe.err
expect 2 missing_value "$SKIFF" eval -c
expect 2 out_of_range "$SKIFF" ocr --text_det_thresh 2 "$SRC/assets/samples/ocr_sample.png"
check "out_of_range: names the flag" grep -q -- "--text_det_thresh" out_of_range.err
expect 2 bad_threads "$SKIFF" --threads 0 info
# ... and bad input files: a recipe with a wrong key, a file that is not a model, an unknown zoo name.
expect 2 bad_recipe "$SKIFF" train -c "$SRC/configs/ocr/rec_crnn_en.yml" -o Global.epoch_nun=3
check "bad_recipe: did you mean" grep -q "did you mean 'epoch_num'" bad_recipe.err
printf 'not a model' >garbage.onnx
expect 2 bad_model "$SKIFF" graph show garbage.onnx
check "bad_model: names the file" grep -q "garbage.onnx" bad_model.err
expect 2 unknown_model "$SKIFF" zoo info no-such-model

# 2 also for eval / export with no weights at all (never a silent random model).
"$SKIFF" ocr synth data/train --count 4 --seed 1 --texts "$SRC/configs/ocr/data/en_lines.txt" 2>/dev/null
DATA=(-o Global.character_dict_path="$SRC/configs/ocr/data/en_dict.txt"
      -o Train.dataset.data_dir=data/train -o Train.dataset.label_file_list=[data/train/rec_gt.txt]
      -o Eval.dataset.data_dir=data/train -o Eval.dataset.label_file_list=[data/train/rec_gt.txt])
expect 2 no_weights "$SKIFF" export -c "$SRC/configs/ocr/rec_crnn_en.yml" "${DATA[@]}" -o Global.save_model_dir=empty_run
check "no_weights: names the places searched" \
  grep -q "Global.checkpoints is not set, empty_run/best_model.safetensors does not exist and Global.pretrained_model is not set" no_weights.err
check "no_weights: nothing written" test ! -e empty_run/inference/inference.onnx

# 3: not implemented: a model with an operator skiff does not have (a hand-made ONNX file:
# ir_version 8, opset 13, one node y = NoSuchOp(x)).
printf '\x08\x08\x3a\x1f\x0a\x10\x0a\x01\x78\x12\x01\x79\x22\x08NoSuchOp\x12\x01\x67\x5a\x03\x0a\x01\x78\x62\x03\x0a\x01\x79\x42\x02\x10\x0d' >unknown_op.onnx
expect 3 not_implemented "$SKIFF" graph show --optimized unknown_op.onnx
check "not_implemented: names the operator" grep -q "NoSuchOp" not_implemented.err

# 5: I/O: a model that is not cached while offline.
expect 5 not_cached "$SKIFF" zoo path ppocr-v4-det

# 6: distributed: rank 0 of 2 whose peer never arrives (SKIFF_DIST_TIMEOUT=1).
port=$((20000 + $$ % 20000))
SKIFF_WORLD_SIZE=2 SKIFF_RANK=0 SKIFF_MASTER_PORT=$port SKIFF_DIST_TIMEOUT=1 \
  expect 6 lonely_rank "$SKIFF" train -c "$SRC/configs/science/fno_burgers.yml" -o data.train_samples=8 \
  -o data.test_samples=2 -o data.grid=64 -o data.solver_grid=64 -o Global.save_model_dir=lonely
check "lonely_rank: says which rank did not arrive" grep -q "DistributedError: .*timed out .*a rank did not start" lonely_rank.err

# 130: Ctrl-C during training saves a checkpoint, then exits 130.
"$SKIFF" train -c "$SRC/configs/ocr/rec_crnn_en.yml" "${DATA[@]}" -o Global.save_model_dir=run -o Global.max_steps=100000 -o Global.epoch_num=100000 -o Global.print_batch_step=1 \
  -o Train.loader.batch_size_per_card=2 -o 'Architecture.Backbone.channels=[8, 8, 8, 8, 8, 8]' \
  -o Architecture.Neck.hidden_size=8 >train.out 2>train.err &
pid=$!
for _ in $(seq 600); do grep -q "step 2/" train.err && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"; rc=$?
check "interrupted: exit 130 (got $rc)" test "$rc" -eq 130 || cat train.err
check "interrupted: a checkpoint was saved" bash -c 'ls run/checkpoints/ckpt-*.safetensors >/dev/null'

echo "$fails failure(s)"
test "$fails" -eq 0
