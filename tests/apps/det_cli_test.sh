#!/usr/bin/env bash
# `skiff det` and `skiff graph convert` as a user runs them, on python3-skimage's
# sample photos: outputs, files, exit codes and error messages.
# Usage: det_cli_test.sh SKIFF_BINARY REPO_ROOT
set -u
SKIFF="$1"
IMAGES=/usr/lib/python3/dist-packages/skimage/data
source "$(dirname "$0")/check.sh"

"$SKIFF" det "$IMAGES/astronaut.png" >"$TMP/out.txt" 2>"$TMP/err.txt"; rc=$?
check "astronaut: exit 0" test "$rc" -eq 0
check "astronaut: a person" grep -q '^person ' "$TMP/out.txt"

printf 'not an image' >"$TMP/corrupt.png"
"$SKIFF" det "$TMP/corrupt.png" "$IMAGES/motorcycle_left.png" "$TMP/missing.jpg" >"$TMP/out2.txt" 2>"$TMP/err2.txt"; rc=$?
check "bad inputs: exit 2" test "$rc" -eq 2
check "bad inputs: corrupt file named" grep -q "corrupt.png" "$TMP/err2.txt"
check "bad inputs: missing file named" grep -q "missing.jpg" "$TMP/err2.txt"
check "bad inputs: the good image is still processed" grep -q '^motorcycle ' "$TMP/out2.txt"

"$SKIFF" det "$IMAGES/chelsea.png" --json --threshold 0.3 >"$TMP/out.json"; rc=$?
check "json: exit 0" test "$rc" -eq 0
check "json: PaddleX keys, a cat" python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).read())
assert d["input_path"].endswith("chelsea.png")
b = d["boxes"]
assert b and all(set(x) == {"cls_id", "label", "score", "coordinate"} and len(x["coordinate"]) == 4 for x in b)
assert b[0]["label"] == "cat" and b[0]["cls_id"] == 15 and all(x["score"] >= 0.3 for x in b)
' "$TMP/out.json"

"$SKIFF" det "$IMAGES/coffee.png" --threshold 0.25 --topk 1 >"$TMP/top1.txt"; rc=$?
check "topk 1: one line" test "$(wc -l <"$TMP/top1.txt")" -eq 1

mkdir -p "$TMP/dir" && cp "$IMAGES/astronaut.png" "$IMAGES/horse.png" "$TMP/dir/"
"$SKIFF" det "$TMP/dir" --save_path "$TMP/res" >"$TMP/out3.txt"; rc=$?
check "directory: exit 0" test "$rc" -eq 0
check "directory: both images" test "$(grep -c '^==> ' "$TMP/out3.txt")" -eq 2
check "save_path: result json" test -s "$TMP/res/horse_res.json"
check "save_path: result image" test -s "$TMP/res/astronaut_res_img.png"

"$SKIFF" det "$IMAGES/astronaut.png" --threshold 2 >/dev/null 2>&1; rc=$?
check "bad option value: non-zero exit" test "$rc" -ne 0
"$SKIFF" det "$IMAGES/astronaut.png" --model no-such-model >/dev/null 2>"$TMP/err4.txt"; rc=$?
check "unknown model: exit 2" test "$rc" -eq 2
check "unknown model: named" grep -q "no-such-model" "$TMP/err4.txt"

"$SKIFF" graph convert nanodet-coco "$TMP/nanodet.onnx" >"$TMP/convert.txt"; rc=$?
check "graph convert: exit 0" test "$rc" -eq 0
"$SKIFF" det "$IMAGES/motorcycle_left.png" --model "$TMP/nanodet.onnx" >"$TMP/onnx.txt"; rc=$?
check "converted ONNX model gives the same boxes" cmp -s "$TMP/onnx.txt" <("$SKIFF" det "$IMAGES/motorcycle_left.png")

[ "$fails" -eq 0 ] && echo "all checks passed" || { echo "$fails check(s) failed"; exit 1; }
