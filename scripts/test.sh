#!/usr/bin/env bash
# Builds skiff (installing packages if needed) and runs the whole test suite.
#   scripts/test.sh                 every test
#   scripts/test.sh -LE network     any extra arguments go to ctest (here: the offline tests)
# A filter (-L, -R, -E, ...) that selects no test is an error: the script names the
# labels there are and exits non-zero instead of reporting success for nothing run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR="${SKIFF_BUILD_DIR:-build}"
selected="$(ctest --test-dir "$BUILD_DIR" -N "$@" 2>/dev/null | sed -n 's/^Total Tests: //p' || true)"
if [ "${selected:-0}" = 0 ]; then
  labels="$(ctest --test-dir "$BUILD_DIR" --print-labels 2>/dev/null | sed -n 's/^  *//p' | paste -sd' ' - || true)"
  echo "test.sh: no test matches: ctest $* (labels: ${labels:-none})" >&2
  exit 1
fi
ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error -j "$(nproc)" "$@"
