#!/usr/bin/env bash
# `skiff det synth` as a user runs it (offline): the files it writes, the same
# bytes for the same seed, and errors that name the bad option.
# Usage: det_synth_cli_test.sh SKIFF_BINARY
set -u
SKIFF="$1"
source "$(dirname "$0")/check.sh"

"$SKIFF" det synth "$TMP/a" --count 12 --seed 5 --size 128 >"$TMP/out.txt" 2>"$TMP/err.txt"; rc=$?
check "exit 0" test "$rc" -eq 0
check "summary on stdout" grep -Eq '^wrote 12 images \(128x128\) with [0-9]+ objects of 10 classes to ' "$TMP/out.txt"
check "area split on stdout" grep -Eq '^objects by COCO area: [0-9]+ small, [0-9]+ medium, [0-9]+ large$' "$TMP/out.txt"
check "12 JPEG images" test "$(ls "$TMP/a/images" | grep -c '^0000[01][0-9]\.jpg$')" -eq 12
check "annotations.json is COCO with exact-looking boxes" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [c["id"] for c in d["categories"]] == list(range(1, 11))
assert len(d["images"]) == 12 and d["images"][0] == {"id": 0, "file_name": "000000.jpg", "width": 128, "height": 128}
ids = {im["id"] for im in d["images"]}
assert d["annotations"]
for a in d["annotations"]:
    x, y, w, h = a["bbox"]
    assert a["image_id"] in ids and 1 <= a["category_id"] <= 10 and a["iscrowd"] == 0
    assert all(isinstance(v, int) for v in a["bbox"]) and x >= 0 and y >= 0 and x + w <= 128 and y + h <= 128
    assert 0 < a["area"] <= w * h
' "$TMP/a/annotations.json"

"$SKIFF" det synth "$TMP/b" --count 12 --seed 5 --size 128 -q >/dev/null 2>&1
check "same seed: same annotations" cmp -s "$TMP/a/annotations.json" "$TMP/b/annotations.json"
check "same seed: same images" diff -r -q "$TMP/a/images" "$TMP/b/images"
"$SKIFF" det synth "$TMP/c" --count 12 --seed 6 --size 128 -q >/dev/null 2>&1
check "other seed: other annotations" test "$(md5sum <"$TMP/a/annotations.json")" != "$(md5sum <"$TMP/c/annotations.json")"

"$SKIFF" det synth "$TMP/d" --count 2 --size 96x64 --max_objects 1 --start_id 7 >/dev/null 2>&1; rc=$?
check "WxH, max_objects, start_id: exit 0" test "$rc" -eq 0
check "WxH, max_objects, start_id: in the JSON" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [(i["id"], i["file_name"], i["width"], i["height"]) for i in d["images"]] == [(7, "000007.jpg", 96, 64), (8, "000008.jpg", 96, 64)]
assert len(d["annotations"]) == 2
' "$TMP/d/annotations.json"

for bad in "--size 10:--size" "--size 12y3:--size" "--max_objects 0:--max_objects" "--count -1:--count" "--start_id -2:--start_id"; do
  args="${bad%%:*}"; name="${bad##*:}"
  # shellcheck disable=SC2086
  "$SKIFF" det synth "$TMP/bad" $args >/dev/null 2>"$TMP/bad.txt"; rc=$?
  check "$args: non-zero exit" test "$rc" -ne 0
  check "$args: names $name" grep -q -- "$name" "$TMP/bad.txt"
done
check "bad options write no annotations" test ! -e "$TMP/bad/annotations.json"
"$SKIFF" det synth >/dev/null 2>&1; rc=$?
check "no directory: non-zero exit" test "$rc" -ne 0

"$SKIFF" det synth --help >"$TMP/help.txt"; rc=$?
check "help: exit 0" test "$rc" -eq 0
check "help: explains the files" grep -q 'annotations.json' "$TMP/help.txt"
check "help: lists --max_objects" grep -q -- '--max_objects' "$TMP/help.txt"
"$SKIFF" det --help >"$TMP/dethelp.txt"
check "det help: lists synth" grep -q 'synth' "$TMP/dethelp.txt"

[ "$fails" -eq 0 ] && echo "all checks passed" || { echo "$fails check(s) failed"; exit 1; }
