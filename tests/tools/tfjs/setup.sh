#!/usr/bin/env bash
# Installs the TensorFlow.js reference (this folder): `npm ci` against the pinned
# package-lock.json, from the npm registry only. Pure JavaScript, no native
# build. Idempotent: does nothing when the installed tree matches the lock file.
#   tests/tools/tfjs/setup.sh
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >&2
fi
stamp="node_modules/.skiff-tfjs-stamp"
want="$(sha256sum package-lock.json | cut -d' ' -f1) node $(node --version)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then exit 0; fi
echo "tfjs tools: npm ci in $(pwd)" >&2
npm ci --no-audit --no-fund --loglevel=error >&2
node -e "require('@tensorflow/tfjs-core'); require('@tensorflow/tfjs-backend-cpu'); require('@tensorflow/tfjs-converter')"
echo "$want" > "$stamp"
