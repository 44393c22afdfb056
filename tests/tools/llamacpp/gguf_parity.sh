#!/usr/bin/env bash
# skiff's GGUF export read by llama.cpp itself: exports tests/data/llama/tiny as F32 and
# F16, lets llama.cpp (generate.mjs) continue "hello world" greedily for 8 tokens, and
# compares the ids with `skiff nlp generate --ids` on the Hugging Face directory.
# Needs the npm registry once (setup.sh), hence the `network` label.
#   tests/tools/llamacpp/gguf_parity.sh SKIFF_BINARY SOURCE_DIR
set -euo pipefail
skiff="$1"; src="$2"
here="$(cd "$(dirname "$0")" && pwd)"
"$here/setup.sh"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
want="$("$skiff" nlp generate --model "$src/tests/data/llama/tiny" --prompt "hello world" --max_new_tokens 8 --ids 2>/dev/null)"
echo "skiff (HF directory):   $want"
status=0
for dtype in f32 f16; do
  "$skiff" nlp export --model "$src/tests/data/llama/tiny" --gguf "$tmp/tiny-$dtype.gguf" --dtype "$dtype"
  got="$(node "$here/generate.mjs" "$tmp/tiny-$dtype.gguf" "hello world" 8)"
  echo "llama.cpp ($dtype GGUF):  $got"
  [ "$got" = "$want" ] || { echo "MISMATCH for $dtype" >&2; status=1; }
done
exit $status
