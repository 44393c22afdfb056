#!/usr/bin/env bash
# The decoder recipes (configs/nlp/fortunes_lm.yml, fortunes_riddles_lora.yml) as a user
# runs them, shrunk to a tiny model and a few dozen steps on fortunes-min's files:
# pre-training (the loss falls), predict, export, skiff nlp generate on the export
# (a SentencePiece tokenizer.model), then LoRA on the riddles: adapters saved alone,
# better than the base on held-out riddles, merged export equal to the adapted model.
# Usage: nlp_decoder_cli_test.sh SKIFF_BINARY SOURCE_DIR
set -u
SKIFF="$(realpath "$1")"
SRC="$(realpath "$2")"
source "$(dirname "$0")/check.sh"
cd "$TMP"
export SKIFF_NUM_THREADS=2
FORTUNES=/usr/share/games/fortunes

LM="$SRC/configs/nlp/fortunes_lm.yml"
SMALL=(-o Data.files="[$FORTUNES/fortunes]" -o Data.eval_share=0.1 -o Tokenizer.model="$TMP/tok.model"
       -o Tokenizer.vocab_size=400 -o Decoder.hidden_size=64 -o Decoder.num_layers=2 -o Decoder.num_heads=4
       -o Decoder.num_kv_heads=2 -o Decoder.intermediate_size=128 -o Decoder.context=32 -o batch_size=8
       -o LearningRate.base_lr=0.01 -o LearningRate.warmup_steps=5 -o log_iter=10 -o save_dir="$TMP/lm")
"$SKIFF" train -c "$LM" "${SMALL[@]}" -o max_iters=60 -o eval_iter=10 >lm.out 2>lm.err; rc=$?
check "train: exit 0" test "$rc" -eq 0
check "train: trains the tokenizer" grep -q "training the tokenizer .*tok.model" lm.err
check "train: evaluates loss and perplexity" grep -q "eval step 60: loss [0-9.]* ppl [0-9.]*" lm.err
first=$(grep -oP "eval step 10: loss \K[0-9.]+" lm.err)
last=$(grep -oP "eval step 60: loss \K[0-9.]+" lm.err)
check "train: held-out loss falls ($first -> $last)" python3 -c "import sys; sys.exit(not $last < $first - 0.3)"
for f in config.json generation_config.json tokenizer.model best_model.safetensors metrics.jsonl; do
  check "train: wrote $f" test -s "lm/$f"
done
check "train: config.json is a llama config" grep -q '"model_type": "llama"' lm/config.json

"$SKIFF" predict -c "$LM" "${SMALL[@]}" "Q:" "The cat" >predict.out 2>predict.err; rc=$?
check "predict: exit 0" test "$rc" -eq 0
check "predict: continues each prompt" test "$(grep -c '^---$' predict.out)" -eq 2
check "predict: starts with the prompt" grep -q "^The cat" predict.out

"$SKIFF" export -c "$LM" "${SMALL[@]}" --output "$TMP/exported" >export.out 2>export.err; rc=$?
check "export: exit 0" test "$rc" -eq 0
check "export: checks the export" grep -qP "export vs trained: max abs diff 0.00e\+00" export.err
for f in config.json model.safetensors tokenizer.model; do check "export: wrote $f" test -s "exported/$f"; done
"$SKIFF" nlp generate --model exported --prompt "The" -n 12 --temperature 0.8 --seed 3 >gen.out 2>gen.err; rc=$?
check "nlp generate on the export: exit 0" test "$rc" -eq 0
check "nlp generate: prints text" test -s gen.out
check "nlp generate: reports the tokens" grep -q "new tokens in" gen.err
"$SKIFF" nlp generate --model exported --prompt "The" -n 12 --temperature 0.8 --seed 3 >gen2.out 2>/dev/null
check "nlp generate: same seed, same text" cmp -s gen.out gen2.out

LORA="$SRC/configs/nlp/fortunes_riddles_lora.yml"
LSMALL=(-o Lora.base="$TMP/lm" -o Data.files="[$FORTUNES/riddles]" -o save_dir="$TMP/lora" -o batch_size=8
        -o LearningRate.base_lr=0.01 -o LearningRate.warmup_steps=5 -o log_iter=10)
"$SKIFF" train -c "$LORA" "${LSMALL[@]}" -o max_iters=40 -o eval_iter=20 >lora.out 2>lora.err; rc=$?
check "lora train: exit 0" test "$rc" -eq 0
check "lora train: only the adapters train" grep -qP "LoRA rank 8 on 8 layers: \d+ trainable of \d+ parameters" lora.err
check "lora train: adapter files" test -s lora/adapter_model.safetensors -a -s lora/adapter_config.json
check "lora train: the adapter file holds adapters alone" python3 - <<'PY'
import json, struct, sys
with open("lora/adapter_model.safetensors", "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    names = [k for k in json.loads(f.read(n)) if k != "__metadata__"]
sys.exit(not (len(names) == 16 and all(".lora_A.weight" in k or ".lora_B.weight" in k for k in names)))
PY
"$SKIFF" eval -c "$LORA" "${LSMALL[@]}" --json >lora_eval.out 2>lora_eval.err; rc=$?
check "lora eval: exit 0" test "$rc" -eq 0
check "lora eval: adapted beats the base on held-out riddles" python3 -c "
import json; m = json.load(open('lora_eval.out')); import sys; sys.exit(not m['loss'] < m['base_loss'])"
"$SKIFF" export -c "$LORA" "${LSMALL[@]}" --output "$TMP/merged" >lexport.out 2>lexport.err; rc=$?
check "lora export: exit 0" test "$rc" -eq 0
diff=$(grep -oP "merged export vs adapters: max abs diff \K[0-9.e+-]+" lexport.err)
check "lora export: merged equals adapted within 1e-5 ($diff)" python3 -c "import sys; sys.exit(not float('$diff') <= 1e-5)"
"$SKIFF" nlp generate --model merged --prompt "Q:" -n 8 >lgen.out 2>lgen.err; rc=$?
check "nlp generate on the merged export: exit 0" test "$rc" -eq 0

# Bad inputs name themselves.
"$SKIFF" train -c "$LORA" "${LSMALL[@]}" -o Lora.base="$TMP/nowhere" >bad.out 2>bad.err; rc=$?
check "lora: a missing base fails" test "$rc" -ne 0
check "lora: names the base" grep -q "nowhere is not a trained model directory" bad.err
"$SKIFF" train -c "$LM" "${SMALL[@]}" -o Data.files="[$TMP/absent.txt]" >bad.out 2>bad.err; rc=$?
check "train: a missing text file fails" test "$rc" -ne 0
check "train: names the file" grep -q "absent.txt" bad.err

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
