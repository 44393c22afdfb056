#!/usr/bin/env bash
# Installs node-llama-cpp (pinned in package-lock.json, npm registry only), whose
# @node-llama-cpp/linux-x64 package carries prebuilt llama.cpp CPU libraries. Its
# post-install step (which may try to build llama.cpp from source) is skipped: the
# prebuilt libraries are used as they are. Idempotent.
#   tests/tools/llamacpp/setup.sh
set -euo pipefail
cd "$(dirname "$0")"
source ../npm_ci.sh
export npm_config_ignore_scripts=true
npm_ci_pinned llamacpp node -e "import('node-llama-cpp').then(() => process.exit(0), () => process.exit(1))"
