#!/usr/bin/env bash
# skiff's GGUF export read by llama.cpp itself: exports tests/data/llama/tiny (and a
# variant with biases, head_dim != hidden/heads, linear rope scaling and tied embeddings,
# make_bias_model.py, and one with a SentencePiece tokenizer.model) as F32 and F16, lets llama.cpp (generate.mjs) continue "hello world" greedily for 8 tokens, and
# compares the ids with `skiff nlp generate --ids` on the Hugging Face directory.
# Needs the npm registry once (setup.sh), hence the `network` label.
#   tests/tools/llamacpp/gguf_parity.sh SKIFF_BINARY SOURCE_DIR
set -euo pipefail
skiff="$1"; src="$2"
here="$(cd "$(dirname "$0")" && pwd)"
"$here/setup.sh"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
# tiny, and a model with biases, head_dim != hidden/heads, linear scaling, tied embeddings.
python3 "$here/make_bias_model.py" "$src" "$tmp/bias"
# tiny's weights with a SentencePiece tokenizer.model instead of tokenizer.json (BPE with
# byte fallback, identity normalization, spaces kept: what the causal_lm recipes train),
# trained here on words of the prompt's letters so that 272 pieces suffice.
mkdir "$tmp/spm"
cp "$src/tests/data/llama/tiny/model.safetensors" "$tmp/spm/"
python3 - "$src/tests/data/llama/tiny/config.json" "$tmp/spm/config.json" "$tmp/words.txt" <<'PY'
import json, random, sys
c = json.load(open(sys.argv[1]))
c.update(bos_token_id=1, eos_token_id=2)  # sentencepiece's <s> and </s>
json.dump(c, open(sys.argv[2], "w"))
rng = random.Random(0)
words = ["hello", "world", "held", "word", "low", "row", "hero", "old"]
open(sys.argv[3], "w").write("\n".join(" ".join(rng.choice(words) for _ in range(8)) for _ in range(400)) + "\n")
PY
"$skiff" nlp train-tokenizer -o "$tmp/spm/tokenizer.model" --vocab-size 272 --model-type bpe --byte-fallback \
  --normalization identity --keep-whitespace "$tmp/words.txt" >/dev/null
status=0
for model in "$src/tests/data/llama/tiny" "$tmp/bias" "$tmp/spm"; do
  want="$("$skiff" nlp generate --model "$model" --prompt "hello world" --max_new_tokens 8 --ids 2>/dev/null)"
  echo "skiff $(basename "$model") (HF directory): $want"
  for dtype in f32 f16; do
    "$skiff" nlp export --model "$model" --gguf "$tmp/m-$dtype.gguf" --dtype "$dtype"
    got="$(node "$here/generate.mjs" "$tmp/m-$dtype.gguf" "hello world" 8)"
    echo "llama.cpp ($dtype GGUF):  $got"
    [ "$got" = "$want" ] || { echo "MISMATCH for $model $dtype" >&2; status=1; }
  done
done
exit $status
