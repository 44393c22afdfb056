#!/usr/bin/env bash
# skiff's GGUF export read by llama.cpp itself: exports tests/data/llama/tiny (and a
# variant with biases, head_dim != hidden/heads, linear rope scaling and tied embeddings,
# make_bias_model.py) as F32 and F16, lets llama.cpp (generate.mjs) continue "hello world" greedily for 8 tokens, and
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
status=0
for model in "$src/tests/data/llama/tiny" "$tmp/bias"; do
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
