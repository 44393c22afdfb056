#!/usr/bin/env bash
# `skiff config show` as a user runs it: merged output, overrides, errors.
# Usage: config_cli_test.sh SKIFF_BINARY
set -u
SKIFF="$1"
source "$(dirname "$0")/check.sh"

mkdir -p "$TMP/base"
printf 'Global: {epoch_num: 100, save_dir: out}\nOptimizer: {lr: {name: Cosine, learning_rate: 0.001}}\n' \
  >"$TMP/base/common.yml"
printf '_BASE_: [base/common.yml]\nGlobal: {epoch_num: 10}\n' >"$TMP/rec.yml"
"$SKIFF" config show -c "$TMP/rec.yml" -o Optimizer.lr.learning_rate=0.0005 -o 'Train.loader.batch_size=[8, 16]' \
  >"$TMP/out.yml" 2>"$TMP/err.txt"; rc=$?
check "show: exit 0" test "$rc" -eq 0
for line in "epoch_num: 10" "save_dir: out" "name: Cosine" "learning_rate: 0.0005" "batch_size: \\[8, 16\\]"; do
  check "show: has '$line'" grep -q -- "^ *$line\$" "$TMP/out.yml"
done
check "show: epoch_num once (the file's value only)" test "$(grep -c epoch_num "$TMP/out.yml")" -eq 1
check "show: no _BASE_ key" bash -c "! grep -q _BASE_ '$TMP/out.yml'"

printf '_BASE_: missing.yml\n' >"$TMP/broken.yml"
"$SKIFF" config show -c "$TMP/broken.yml" >/dev/null 2>"$TMP/broken.err"; rc=$?
check "missing base: non-zero exit" test "$rc" -ne 0
check "missing base: names both files" grep -q "missing.yml' (a _BASE_ of '.*broken.yml')" "$TMP/broken.err"
"$SKIFF" config show -c "$TMP/rec.yml" -o Global.epoch_num.x=1 >/dev/null 2>"$TMP/ov.err"; rc=$?
check "bad override: explained" grep -q "'epoch_num' is not a map" "$TMP/ov.err"

echo "$fails failure(s)"
test "$fails" -eq 0
