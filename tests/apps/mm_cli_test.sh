#!/usr/bin/env bash
# `skiff mm synth` as a user runs it (offline): the files it writes, the same bytes for the same
# seed, the held-out pairs kept out of train and val, and errors that name the bad option.
# Usage: mm_cli_test.sh SKIFF_BINARY
set -u
SKIFF="$1"
source "$(dirname "$0")/check.sh"

"$SKIFF" mm synth "$TMP/a" --train 30 --val 6 --heldout 8 --seed 2 --size 48 >"$TMP/out.txt" 2>"$TMP/err.txt"; rc=$?
check "exit 0" test "$rc" -eq 0
check "summary on stdout" grep -q '^wrote 44 images (48x48): 30 train, 6 val, 8 heldout' "$TMP/out.txt"
check "44 PNG images" test "$(ls "$TMP/a/images" | grep -c '\.png$')" -eq 44
check "COCO captions, TSV and summary agree" python3 -c '
import json, sys, os
d = sys.argv[1]
s = json.load(open(os.path.join(d, "synth.json")))
held = set(s["held_out_pairs"])
assert len(held) == 6, held
for split, n in (("train", 30), ("val", 6), ("heldout", 8)):
    c = json.load(open(os.path.join(d, "captions_%s.json" % split)))
    assert len(c["images"]) == n and s["splits"][split]["images"] == n
    tsv = [l.split("\t") for l in open(os.path.join(d, "captions_%s.tsv" % split)).read().splitlines()]
    assert len(tsv) == len(c["annotations"]) == s["splits"][split]["captions"]
    for a in c["annotations"]:
        words = a["caption"]
        seen = [p for p in held if p in words]
        assert (split == "heldout") == bool(seen), (split, words)
    if split == "heldout":
        assert all(im["label"] in held for im in c["images"])
' "$TMP/a"
check "vocab.txt: a BERT vocabulary of the caption words" python3 -c '
import sys
v = open(sys.argv[1]).read().split()
assert v[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], v[:5]
assert {"red", "triangle", "triangles", "left", "written"} <= set(v)
' "$TMP/a/vocab.txt"
"$SKIFF" mm synth "$TMP/b" --train 30 --val 6 --heldout 8 --seed 2 --size 48 -q >/dev/null 2>&1
check "same seed: same captions" cmp -s "$TMP/a/captions_train.json" "$TMP/b/captions_train.json"
check "same seed: same images" diff -r -q "$TMP/a/images" "$TMP/b/images"

"$SKIFF" mm synth "$TMP/c" --size 16 >/dev/null 2>"$TMP/size.err"; rc=$?
check "--size 16: usage error (exit 2)" test "$rc" -eq 2
check "--size 16: names the option" grep -q -- "--size" "$TMP/size.err"
"$SKIFF" mm synth "$TMP/c" --train -3 >/dev/null 2>"$TMP/count.err"; rc=$?
check "--train -3: exit 2" test "$rc" -eq 2
check "--train -3: names the option" grep -q -- "--train" "$TMP/count.err"
"$SKIFF" mm synth --help >"$TMP/help.txt" 2>&1
check "--help explains the held-out pairs" grep -q "never appear in train or val" "$TMP/help.txt"
"$SKIFF" mm >/dev/null 2>"$TMP/none.err"; rc=$?
check "skiff mm without a subcommand: exit 2" test "$rc" -eq 2

echo "$fails failure(s)"
test "$fails" -eq 0
