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
source ../npm_ci.sh
export ONNXRUNTIME_NODE_INSTALL=skip
npm_ci_pinned ort node -e "require('onnxruntime-node'); require('@techstark/opencv-js'); require('clipper-lib')"
