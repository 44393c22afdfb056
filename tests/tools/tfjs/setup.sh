#!/usr/bin/env bash
# Installs the TensorFlow.js reference (this folder): `npm ci` against the pinned
# package-lock.json, from the npm registry only. Pure JavaScript, no native
# build. Idempotent: does nothing when the installed tree matches the lock file.
#   tests/tools/tfjs/setup.sh
set -euo pipefail
cd "$(dirname "$0")"
source ../npm_ci.sh
npm_ci_pinned tfjs node -e "require('@tensorflow/tfjs-core'); require('@tensorflow/tfjs-backend-cpu'); require('@tensorflow/tfjs-converter')"
