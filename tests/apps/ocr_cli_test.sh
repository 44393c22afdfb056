#!/usr/bin/env bash
# `skiff ocr` and `skiff graph show` as a user runs them: outputs, files, exit
# codes and error messages. Usage: ocr_cli_test.sh SKIFF_BINARY REPO_ROOT
set -u
SKIFF="$1"
ROOT="$2"
SAMPLE="$ROOT/assets/samples/ocr_sample.png"
source "$(dirname "$0")/check.sh"

"$SKIFF" ocr "$SAMPLE" >"$TMP/out.txt" 2>"$TMP/err.txt"; rc=$?
check "sample: exit 0" test "$rc" -eq 0
check "sample: total line" grep -qx '合计：109.70元' "$TMP/out.txt"
check "sample: English line" grep -qx 'Thank you for shopping with us!' "$TMP/out.txt"
check "sample: 13 lines" test "$(wc -l <"$TMP/out.txt")" -eq 13
check "sample: word spaces restored" grep -qx 'FRESH TIME MART' "$TMP/out.txt"
"$SKIFF" ocr "$SAMPLE" --restore_spaces false >"$TMP/plain.txt" 2>/dev/null; rc=$?
check "restore_spaces false: exit 0" test "$rc" -eq 0
check "restore_spaces false: PaddleOCR's text" grep -qx 'FRESHTIMEMART' "$TMP/plain.txt"
check "restore_spaces: Chinese lines unchanged" diff <(grep -vP '[A-Za-z0-9]' "$TMP/out.txt") \
  <(grep -vP '[A-Za-z0-9]' "$TMP/plain.txt")
check "restore_spaces: same characters" diff <(tr -d ' ' <"$TMP/out.txt") <(tr -d ' ' <"$TMP/plain.txt")
"$SKIFF" ocr "$SAMPLE" --restore_spaces maybe >/dev/null 2>"$TMP/err_rs.txt"; rc=$?
check "restore_spaces maybe: non-zero exit" test "$rc" -ne 0
check "restore_spaces maybe: flag named" grep -q -- "--restore_spaces" "$TMP/err_rs.txt"

printf 'not an image' >"$TMP/corrupt.png"
: >"$TMP/empty.jpg"
"$SKIFF" ocr "$TMP/corrupt.png" "$SAMPLE" "$TMP/missing.jpg" "$TMP/empty.jpg" >"$TMP/out2.txt" 2>"$TMP/err2.txt"; rc=$?
check "bad inputs: exit 2" test "$rc" -eq 2
check "bad inputs: corrupt file named" grep -q "corrupt.png" "$TMP/err2.txt"
check "bad inputs: missing file named" grep -q "missing.jpg" "$TMP/err2.txt"
check "bad inputs: empty file named" grep -q "empty.jpg" "$TMP/err2.txt"
check "bad inputs: good image still read" grep -qx '合计：109.70元' "$TMP/out2.txt"

"$SKIFF" ocr "$SAMPLE" --json --text-det-thresh 0.3 --use_textline_orientation false >"$TMP/out.json"; rc=$?
check "json: exit 0" test "$rc" -eq 0
check "json: PaddleOCR 3.x keys" python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).read())
keys = ["input_path", "dt_polys", "dt_scores", "rec_texts", "rec_scores", "rec_polys", "rec_boxes",
        "textline_orientation_angles", "timings_ms"]
assert all(k in d for k in keys), d.keys()
assert len(d["rec_texts"]) == 13 and all(a == -1 for a in d["textline_orientation_angles"])
assert all(len(p) == 4 and len(p[0]) == 2 for p in d["rec_polys"]) and all(len(b) == 4 for b in d["rec_boxes"])
' "$TMP/out.json"

"$SKIFF" ocr "$SAMPLE" --save_path "$TMP/res" >/dev/null; rc=$?
check "save_path: exit 0" test "$rc" -eq 0
check "save_path: result json" test -s "$TMP/res/ocr_sample_res.json"
check "save_path: result image" test -s "$TMP/res/ocr_sample_ocr_res_img.png"

mkdir -p "$TMP/dir" && cp "$SAMPLE" "$TMP/dir/a.png" && cp "$SAMPLE" "$TMP/dir/b.png"
"$SKIFF" ocr "$TMP/dir" >"$TMP/out3.txt"; rc=$?
check "directory: exit 0" test "$rc" -eq 0
check "directory: both images" test "$(grep -c '^==> ' "$TMP/out3.txt")" -eq 2
"$SKIFF" ocr "$TMP/dir/*.png" >"$TMP/out4.txt"; rc=$?
check "glob: both images" test "$(grep -c '^==> ' "$TMP/out4.txt")" -eq 2

"$SKIFF" ocr "$SAMPLE" --text_det_thresh 2 >/dev/null 2>&1; rc=$?
check "bad option value: non-zero exit" test "$rc" -ne 0

"$SKIFF" ocr synth "$TMP/synth" --count 2 --seed 5 2>/dev/null; rc=$?
check "synth: exit 0" test "$rc" -eq 0
check "synth: det labels" test "$(wc -l <"$TMP/synth/det_gt.txt")" -eq 2
check "synth: rec labels" test -s "$TMP/synth/rec_gt.txt"

"$SKIFF" graph show ppocr-v4-det >"$TMP/graph.txt"; rc=$?
check "graph show: exit 0" test "$rc" -eq 0
check "graph show: op histogram" grep -q "Conv " "$TMP/graph.txt"
"$SKIFF" graph show "$TMP/corrupt.png" 2>"$TMP/err5.txt"; rc=$?
check "graph show corrupt: exit 2 (bad input: a file that is not a model)" test "$rc" -eq 2
check "graph show corrupt: names file" grep -q "corrupt.png" "$TMP/err5.txt"

echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
exit $((fails == 0 ? 0 : 1))
