#!/usr/bin/env bash
# The C API's examples as a user runs them: examples/c/ocr_example.c (built as
# skiff_c_example) and examples/python/skiff_ctypes.py on the sample receipt.
# Usage: c_api_examples_test.sh C_EXAMPLE LIBSKIFF REPO_ROOT
set -u
EXAMPLE="$1"
LIB="$2"
ROOT="$3"
SAMPLE="$ROOT/assets/samples/ocr_sample.png"
source "$(dirname "$0")/check.sh"

"$EXAMPLE" "$SAMPLE" >"$TMP/c.txt" 2>"$TMP/c.err"; rc=$?
check "C example: exit 0" test "$rc" -eq 0
check "C example: the OCR result's JSON" python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert "FRESH TIME MART" in r["ocrResults"][0]["prunedResult"]["rec_texts"], r' "$TMP/c.txt"
check "C example: the detector's output shape" grep -qx "sigmoid_0.tmp_0: 1 1 64 96" "$TMP/c.txt"
"$EXAMPLE" >/dev/null 2>"$TMP/usage.err"; rc=$?
check "C example without an image: exit 2 with usage" test "$rc" -eq 2
"$EXAMPLE" /no/such.png >/dev/null 2>"$TMP/missing.err"; rc=$?
check "C example, missing image: exit 1 naming it" grep -q "/no/such.png" "$TMP/missing.err"

python3 "$ROOT/examples/python/skiff_ctypes.py" "$SAMPLE" --lib "$LIB" >"$TMP/py.txt" 2>"$TMP/py.err"; rc=$?
check "Python example: exit 0" test "$rc" -eq 0
check "Python example: the text" grep -qx "FRESH TIME MART" "$TMP/py.txt"
check "Python example: 13 lines then the model" test "$(grep -c . "$TMP/py.txt")" -eq 15
check "Python example: the detector's output shape" grep -qx "{'sigmoid_0.tmp_0': \[1, 1, 64, 96\]}" "$TMP/py.txt"
check "Python example: errors name the file" grep -q "no/such/image.png" "$TMP/py.txt"
[ "$fails" -eq 0 ] || { cat "$TMP/c.err" "$TMP/py.txt" "$TMP/py.err"; }

echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
exit $((fails == 0 ? 0 : 1))
