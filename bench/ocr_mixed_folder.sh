#!/usr/bin/env bash
# Fills DIR with a mixed OCR folder like the one a user runs `skiff ocr DIR` on: the bundled
# receipt, synthetic pages (Chinese, English and mixed lines; `skiff ocr synth`), single
# text-line crops from those pages, and the photos and scanned pages Debian's python3-skimage
# ships (astronaut, coffee, cat, motorcycle, rocket, a printed page, a text sign...).
# Same arguments, same files: the folder is deterministic.
#   bench/ocr_mixed_folder.sh DIR [PAGES=24] [LINES=6] [SEED=7]
# Prints the number of images written.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="${1:?usage: bench/ocr_mixed_folder.sh DIR [PAGES] [LINES] [SEED]}"
PAGES="${2:-24}"
LINES="${3:-6}"
SEED="${4:-7}"
SKIFF_BIN="${SKIFF_BIN:-build/bin/skiff}"
SKIMAGE=/usr/lib/python3/dist-packages/skimage/data
die() { echo "ocr_mixed_folder: error: $*" >&2; exit 2; }
[ -x "$SKIFF_BIN" ] || die "$SKIFF_BIN not found (build skiff first, or set SKIFF_BIN)"
[ -d "$SKIMAGE" ] || die "$SKIMAGE not found (scripts/setup.sh installs python3-skimage)"

mkdir -p "$DIR"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp assets/samples/ocr_sample.png "$DIR/receipt.png"
"$SKIFF_BIN" ocr synth "$work/synth" --count "$PAGES" --seed "$SEED" >/dev/null
for f in "$work"/synth/img_*.jpg; do cp "$f" "$DIR/page_$(basename "$f")"; done
# Every n-th crop, so the lines come from different pages and languages.
mapfile -t crops < <(ls "$work"/synth/crops/*.jpg)
[ "${#crops[@]}" -ge "$LINES" ] || die "only ${#crops[@]} crops for $LINES lines"
step=$(( ${#crops[@]} / (LINES > 0 ? LINES : 1) ))
for ((i = 0; i < LINES; i++)); do cp "${crops[i * step]}" "$DIR/line_$(basename "${crops[i * step]}")"; done
for f in astronaut.png coffee.png chelsea.png motorcycle_left.png rocket.jpg page.png text.png logo.png \
         hubble_deep_field.jpg; do
  [ -f "$SKIMAGE/$f" ] && cp "$SKIMAGE/$f" "$DIR/photo_$f"
done
ls "$DIR" | wc -l
