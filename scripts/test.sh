#!/usr/bin/env bash
# Builds skiff (installing packages if needed) and runs the whole test suite.
#   scripts/test.sh                 every test
#   scripts/test.sh -L gpu          any extra arguments go to ctest
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR="${SKIFF_BUILD_DIR:-build}"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
