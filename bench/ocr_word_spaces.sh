#!/usr/bin/env bash
# Word-space restoration of `skiff ocr` (ocr::WordSpaceParams), measured on rendered
# lines with known text: tests/data/ocr_spaces/ holds a tuning set (tune_*.txt:
# phrases from the GPL-3 text, mixed English/Chinese lines, receipt-style digits) and a
# held-out set (heldout_*.txt: phrases from the Apache-2.0 and MPL-2.0 texts and our
# own signs, other Chinese words, other item names), rendered with other seeds.
#
#   1. held-out sets: character accuracy (spaces counted) before (PaddleOCR's greedy
#      text) and after, over every line and over the lines whose text is right once
#      spaces are removed (skiff_ocr_word_spaces);
#   2. Chinese unchanged: `skiff ocr` on rendered pages of the built-in corpus (Chinese,
#      English, digits, mixed) and on assets/samples/ocr_sample.png, with
#      --restore_spaces false (or BASELINE_SKIFF, e.g. a build of the previous commit)
#      and with the default: every line with a CJK character must read the same, and
#      every line that changed may differ only by spaces put between two ASCII characters.
#   3. with SWEEP=1, first the parameter grid on the tuning set (how the defaults were chosen).
#
#   bench/ocr_word_spaces.sh [BUILD_DIR]     (default build; needs skiff and skiff_ocr_word_spaces)
#   env: SWEEP=1, BASELINE_SKIFF=path/to/old/skiff, PAGES (built-in corpus pages, 20)
# Exit 1 when the Chinese check fails.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
SKIFF="$BUILD/bin/skiff"
TOOL="$BUILD/bin/skiff_ocr_word_spaces"
DATA="$ROOT/tests/data/ocr_spaces"
PAGES="${PAGES:-20}"
for f in "$SKIFF" "$TOOL"; do [ -x "$f" ] || { echo "ocr_word_spaces: build $(basename "$f") first" >&2; exit 2; }; done
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

if [ "${SWEEP:-0}" = 1 ]; then
  cat "$DATA"/tune_en.txt "$DATA"/tune_mixed.txt "$DATA"/tune_digits.txt >"$TMP/tune.txt"
  echo "== tuning set: parameter grid (best first)"
  "$TOOL" --texts "$TMP/tune.txt" --seed 1000 --count 60 --sweep | head -40
fi

echo "== held-out sets (default parameters)"
"$TOOL" --texts "$DATA/heldout_en.txt" --seed 5000 --count 40
"$TOOL" --texts "$DATA/heldout_mixed.txt" --seed 6000 --count 20
"$TOOL" --texts "$DATA/heldout_digits.txt" --seed 7000 --count 25

echo "== Chinese unchanged: $PAGES pages of the built-in corpus (seed 11) + the sample"
"$SKIFF" ocr synth "$TMP/pages" --count "$PAGES" --seed 11 2>/dev/null
BASE=("$SKIFF" ocr --restore_spaces false)
[ -n "${BASELINE_SKIFF:-}" ] && BASE=("$BASELINE_SKIFF" ocr)
"${BASE[@]}" "$TMP/pages" "$ROOT/assets/samples/ocr_sample.png" >"$TMP/before.txt"
"$SKIFF" ocr "$TMP/pages" "$ROOT/assets/samples/ocr_sample.png" >"$TMP/after.txt"
python3 - "$TMP/before.txt" "$TMP/after.txt" <<'PY'
import sys
before = open(sys.argv[1], encoding="utf-8").read().splitlines()
after = open(sys.argv[2], encoding="utf-8").read().splitlines()
if len(before) != len(after):
    sys.exit(f"different line counts: {len(before)} before, {len(after)} after")
ascii_glyph = lambda c: "!" <= c <= "~"
def only_latin_spaces_added(b, a):
    i = 0
    for j, c in enumerate(a):
        if i < len(b) and b[i] == c:
            i += 1
        elif c == " " and 0 < i < len(b) and ascii_glyph(b[i - 1]) and ascii_glyph(b[i]):
            continue
        else:
            return False
    return i == len(b)
cjk = [(b, a) for b, a in zip(before, after) if not b.startswith("==> ") and any(ord(c) > 0x2E7F for c in b)]
changed = [(b, a) for b, a in zip(before, after) if b != a]
cjk_changed = [(b, a) for b, a in cjk if b != a]
bad = [(b, a) for b, a in changed if not only_latin_spaces_added(b, a)]
print(f"{len(before)} lines, {len(cjk)} with CJK characters, {len(changed)} changed "
      f"({len(cjk_changed)} of them with CJK characters)")
for b, a in changed:
    print(f"  {b!r} -> {a!r}")
pure = [(b, a) for b, a in cjk_changed if not only_latin_spaces_added(b, a)]
if bad or pure:
    print("FAIL: changes other than spaces between two ASCII characters:", bad)
    sys.exit(1)
print("OK: lines with CJK characters read the same, except spaces between ASCII characters in them")
PY
