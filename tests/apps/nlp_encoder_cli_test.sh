#!/usr/bin/env bash
# skiff train / eval / predict / export and skiff nlp classify as a user runs them on
# the encoder recipes (configs/nlp/), shrunk to a few steps on a small mail corpus in
# the SpamAssassin package's layout that this script writes (offline: no zoo pull).
# Usage: nlp_encoder_cli_test.sh SKIFF_BINARY SOURCE_DIR
set -u
SKIFF="$(realpath "$1")"
SRC="$(realpath "$2")"
source "$(dirname "$0")/check.sh"
cd "$TMP"
export SKIFF_HOME="$TMP/home" SKIFF_OFFLINE=1 SKIFF_NUM_THREADS=2

# Ham: fortunes-like prose; spam: offers. Each a JSON file with the raw message, as the package has.
python3 - <<'PY'
import json, os, random
random.seed(1)
words = "the of meeting project notes tomorrow review code patch build kernel thanks list reply question".split()
offer = "free money winner click now offer cheap viagra loan credit cash prize limited urgent".split()
groups = {"easy-ham-1": 0, "easy-ham-2": 0, "hard-ham-1": 0, "spam-1": 1, "spam-2": 1}
for g, spam in groups.items():
    os.makedirs(f"data/{g}", exist_ok=True)
    for i in range(16):
        pool = offer if spam else words
        subject = " ".join(random.choice(pool) for _ in range(4))
        # Random made-up words too, so the tokenizer has enough text for its 100 pieces.
        made_up = " ".join("".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6)) for _ in range(8))
        body = "\n".join(" ".join(random.choice(pool) for _ in range(10)) for _ in range(4)) + "\n" + made_up
        text = f"From x@y.z  Thu Aug 22 2002\nReceived: from relay{i}\nSubject: {subject}\n\n{body}\n"
        with open(f"data/{g}/{i:05d}.{i:032x}.json", "w") as f:
            json.dump({"id": f"{i:05d}", "group": g, "text": text}, f)
PY
SMALL=(-o Data.dataset_dir="$TMP/data" -o Tokenizer.model="$TMP/tok.model" -o Tokenizer.vocab_size=100
       -o Encoder.hidden_size=32 -o Encoder.intermediate_size=64 -o batch_size=8 -o log_iter=2)
MLM="$SRC/configs/nlp/encoder_mlm_pretrain.yml"
CLS="$SRC/configs/nlp/spam_classifier.yml"

"$SKIFF" train -c "$MLM" "${SMALL[@]}" -o save_dir="$TMP/mlm" -o max_iters=4 -o eval_iter=4 >mlm.out 2>mlm.err; rc=$?
check "mlm train: exit 0" test "$rc" -eq 0
check "mlm train: trains the tokenizer" grep -q "training the tokenizer .*tok.model" mlm.err
check "mlm train: logs steps" grep -q "step 4/4 loss" mlm.err
check "mlm train: evaluates masked-token accuracy" grep -q "eval step 4: mlm_acc [0-9.]* mlm_loss" mlm.err
for f in best_model.safetensors encoder.json tokenizer.model metrics.jsonl; do
  check "mlm train: wrote $f" test -s "mlm/$f"
done

CLSO=("${SMALL[@]}" -o save_dir="$TMP/cls" -o pretrained="$TMP/mlm")
"$SKIFF" train -c "$CLS" "${CLSO[@]}" -o max_iters=6 -o eval_iter=3 >cls.out 2>cls.err; rc=$?
check "classifier train: exit 0" test "$rc" -eq 0
check "classifier train: starts from the MLM encoder" grep -q "encoder initialised from .*mlm/best_model.safetensors" cls.err
check "classifier train: evaluates accuracy and F1" grep -q "eval step 6: accuracy [0-9.]* f1 [0-9.]*" cls.err

"$SKIFF" train -c "$CLS" "${CLSO[@]}" -o max_iters=8 -o eval_iter=3 --resume >resume.out 2>resume.err; rc=$?
check "classifier train --resume: exit 0" test "$rc" -eq 0
check "classifier train --resume: continues at step 6" grep -q "resumed from .*ckpt-0000000006.safetensors at step 6" resume.err

"$SKIFF" eval -c "$CLS" "${CLSO[@]}" --json >eval.out 2>eval.err; rc=$?
check "eval: exit 0" test "$rc" -eq 0
check "eval: accuracy, f1, precision, recall" grep -q '"accuracy":.*"f1":.*"precision":.*"recall":.*"samples":16' eval.out

printf 'From a@b.c  Mon\nReceived: x\nSubject: free cash prize\n\nclick now cheap offer\n' >mail.eml
"$SKIFF" predict -c "$CLS" "${CLSO[@]}" mail.eml >predict.out 2>predict.err; rc=$?
check "predict: exit 0" test "$rc" -eq 0
check "predict: file<TAB>JSON label" grep -qP '^mail.eml\t\{"label":"(ham|spam)","score":[0-9.]+\}$' predict.out

"$SKIFF" export -c "$CLS" "${CLSO[@]}" --output "$TMP/exported" >export.out 2>export.err; rc=$?
check "export: exit 0" test "$rc" -eq 0
for f in model.safetensors encoder.json tokenizer.model; do check "export: wrote $f" test -s "exported/$f"; done

"$SKIFF" nlp classify --model exported --text "review the patch tomorrow" >classify.out 2>classify.err; rc=$?
check "classify --model: exit 0" test "$rc" -eq 0
check "classify --model: label, probability, text" grep -qP '^(ham|spam)\t[01]\.\d{4}\treview the patch tomorrow$' classify.out
"$SKIFF" nlp classify -c "$CLS" "${CLSO[@]}" --json mail.eml >classify_json.out 2>&1; rc=$?
check "classify -c --json: exit 0" test "$rc" -eq 0
check "classify --json: one object" grep -qP '^\{"input":"mail.eml","label":"(ham|spam)","probabilities":\{"ham":[0-9.]+,"spam":[0-9.]+\},"probability":[0-9.]+\}$' classify_json.out

# Bad inputs name themselves.
"$SKIFF" nlp classify --model nowhere --text hi >bad.out 2>bad.err; rc=$?
check "classify: missing model dir fails" test "$rc" -ne 0
check "classify: names the directory" grep -q "nowhere: no such model directory" bad.err
"$SKIFF" nlp classify --model exported missing.txt >bad.out 2>bad.err; rc=$?
check "classify: missing input fails" test "$rc" -ne 0
check "classify: names the file" grep -q "missing.txt: no such file" bad.err
"$SKIFF" nlp classify --model "$TMP/mlm" --text hi >bad.out 2>bad.err; rc=$?
check "classify: an MLM directory is refused" grep -q "not a classifier's directory" bad.err
cp "$CLS" bad.yml
sed -i 's|^_BASE_: \[|_BASE_: ['"$SRC"'/configs/nlp/|; s|, _base_/|, '"$SRC"'/configs/nlp/_base_/|' bad.yml
echo "Encoder: {hiden_size: 64}" >>bad.yml
"$SKIFF" train -c bad.yml "${CLSO[@]}" >bad.out 2>bad.err; rc=$?
check "train: a misspelt key fails" test "$rc" -ne 0
check "train: names file, line and key" grep -q "bad.yml:[0-9]*.*hiden_size" bad.err

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
