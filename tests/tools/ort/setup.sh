#!/usr/bin/env bash
# Installs the Node packages of the ONNX Runtime reference tools (this folder) and
# of bench/ort, which resolves its modules from here: `npm ci` against the pinned
# package-lock.json, from the npm registry only. onnxruntime-node bundles its CPU
# build; its post-install step (which would fetch the CUDA provider from outside
# the registry) is skipped. Idempotent: does nothing when the installed tree
# matches the lock file.
#   tests/tools/ort/setup.sh
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >&2
fi
stamp="node_modules/.skiff-ort-stamp"
want="$(sha256sum package-lock.json | cut -d' ' -f1) node $(node --version)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   node -e "require('onnxruntime-node'); require('@techstark/opencv-js'); require('clipper-lib')" 2>/dev/null; then
  exit 0
fi
echo "ort tools: npm ci in $(pwd)" >&2
ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error >&2
node -e "require('onnxruntime-node')" || { echo "ort tools: onnxruntime-node does not load" >&2; exit 1; }
echo "$want" > "$stamp"
