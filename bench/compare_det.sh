#!/usr/bin/env bash
# End-to-end object detection: `skiff det DIR --json` against the same pipeline
# over ONNX Runtime (bench/ort/det_pipeline.mjs: same NanoDet converted to ONNX,
# same letterbox, normalisation, decoding and NMS), on python3-skimage's photos
# copied REPEAT times. Checks first that both sides find the same boxes (labels
# equal, coordinates within 0.5 px), then prints the median per-image time
# (image read to boxes, first image of each run left out: it includes plan
# building) and the skiff/ORT ratio, at each thread count.
#   bench/compare_det.sh [threads, default 1,2]
#   env: SKIFF_BIN (build/bin/skiff), REPEAT (5)
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS="${1:-1,2}"
SKIFF_BIN="${SKIFF_BIN:-build/bin/skiff}"
REPEAT="${REPEAT:-5}"
IMAGES=/usr/lib/python3/dist-packages/skimage/data
die() { echo "compare_det: error: $*" >&2; exit 2; }
[ -x "$SKIFF_BIN" ] || die "$SKIFF_BIN not found (build skiff first)"
[ -f "$IMAGES/astronaut.png" ] || die "python3-skimage's sample images are missing (scripts/setup.sh installs them)"
tests/tools/ort/setup.sh
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
mkdir -p "$OUT/photos"
for r in $(seq 1 "$REPEAT"); do
  for f in astronaut coffee chelsea motorcycle_left motorcycle_right horse; do cp "$IMAGES/$f.png" "$OUT/photos/${f}_$r.png"; done
done
"$SKIFF_BIN" graph convert nanodet-coco "$OUT/nanodet.onnx" >&2
source bench/peer_env.sh
for t in ${THREADS//,/ }; do
  "$SKIFF_BIN" det "$OUT/photos" --json --threads "$t" >"$OUT/skiff.jsonl"
  peer node bench/ort/det_pipeline.mjs "$OUT/nanodet.onnx" "$OUT/photos" --threads "$t" >"$OUT/ort.jsonl"
  node - "$OUT/skiff.jsonl" "$OUT/ort.jsonl" "$t" <<'JS'
const fs = require('fs');
const load = (p) => fs.readFileSync(p, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const [s, o, t] = [load(process.argv[2]), load(process.argv[3]), process.argv[4]];
if (s.length !== o.length) { console.error(`compare_det: ${s.length} vs ${o.length} images`); process.exit(1); }
for (let i = 0; i < s.length; ++i) {
  const a = s[i].boxes, b = o[i].boxes;
  const same = a.length === b.length && a.every((x, k) => x.cls_id === b[k].cls_id &&
    x.coordinate.every((v, j) => Math.abs(v - b[k].coordinate[j]) <= 0.5));
  if (!same) { console.error(`compare_det: MISMATCH on ${s[i].input_path}`); process.exit(1); }
}
const med = (rows) => { const v = rows.slice(1).map((r) => r.timings_ms.total).sort((x, y) => x - y); return v[Math.floor(v.length / 2)]; };
const ms = med(s), mo = med(o);
console.log(`threads ${t}: ${s.length} images, same boxes; median per image skiff ${ms.toFixed(2)} ms, ORT pipeline ${mo.toFixed(2)} ms, skiff/ORT ${(ms / mo).toFixed(2)}`);
JS
done
