#!/usr/bin/env bash
# OCR parity: skiff's PP-OCRv4 pipeline (`skiff ocr --json`) against the same
# pipeline over ONNX Runtime (ocr_pipeline.mjs), on synthetic images (`skiff ocr
# synth`) plus assets/samples/ocr_sample.png, orientation classifier on, same
# models, 1 thread each. Lines are matched by box (IoU >= 0.5, or each box holds
# the other's centre); prints the number of lines, how many read identically, the
# ratio and how well the detection boxes agree. skiff runs with --restore_spaces
# false: its word-space restoration (docs/ocr.md#word-spaces) is a step PaddleOCR
# does not have, and this test checks that the steps both have give the same text.
#
# The synthetic images are JPEGs, and the two sides decode JPEG differently
# (skiff: OpenCV/libjpeg-turbo, fancy chroma upsampling, ISLOW IDCT; the Node
# reference: jpeg-js, nearest-neighbour upsampling, another IDCT: up to 40 levels
# apart per channel). The gating comparison therefore feeds both sides the same
# pixels: each JPEG is decoded once (jpeg-js) and saved as PNG. The JPEGs as they
# are are compared too, for information (set JPEG=0 to skip).
#
# Exit 1 when the identical-text ratio on the PNG set is below MIN_RATIO, 2 on a
# usage or tool error.
#   tests/tools/ort/ocr_parity.sh [SKIFF_BIN] [REPO_ROOT]
#   env: COUNT (30 synthetic images), SEED (7), MIN_RATIO (0.99), JPEG (1),
#        DUMP_DIR (keep the JSON results, images and mismatches.json there),
#        SKIFF_BIN / REPO_ROOT (defaults: build/bin/skiff, this checkout)
# Needs the models in skiff's cache (pulled on first use) and `npm ci` in this
# folder (setup.sh, run here; needs the npm registry once).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="${2:-${REPO_ROOT:-$(cd "$HERE/../../.." && pwd)}}"
SKIFF="${1:-${SKIFF_BIN:-$ROOT/build/bin/skiff}}"
COUNT="${COUNT:-30}"
SEED="${SEED:-7}"
MIN_RATIO="${MIN_RATIO:-0.99}"
JPEG="${JPEG:-1}"
DUMP_DIR="${DUMP_DIR:-}"

die() { echo "ocr_parity: error: $*" >&2; exit 2; }
[ -x "$SKIFF" ] || die "$SKIFF is not an executable (build skiff, or pass its path)"
"$HERE/setup.sh"

DET_DIR="$("$SKIFF" zoo path ppocr-v4-det)"
REC_DIR="$("$SKIFF" zoo path ppocr-v4-rec)"
CLS_DIR="$("$SKIFF" zoo path ppocr-mobile-v2-cls)"
DET="$DET_DIR/ch_PP-OCRv4_det_infer.onnx"
REC="$REC_DIR/ch_PP-OCRv4_rec_infer.onnx"
CLS="$CLS_DIR/ch_ppocr_mobile_v2.0_cls_infer.onnx"
DICT="$REC_DIR/ppocr_keys_v1.txt"
for f in "$DET" "$REC" "$CLS" "$DICT"; do [ -f "$f" ] || die "model file $f is missing"; done

if [ -n "$DUMP_DIR" ]; then
  mkdir -p "$DUMP_DIR"
  TMP="$(cd "$DUMP_DIR" && pwd)"
else
  TMP="$(mktemp -d)"
  trap 'rm -rf "$TMP"' EXIT
fi
rm -rf "$TMP/synth" "$TMP/png"
"$SKIFF" ocr synth "$TMP/synth" --count "$COUNT" --seed "$SEED" 2>/dev/null
SAMPLE="$ROOT/assets/samples/ocr_sample.png"
JPEGS=("$TMP"/synth/img_*.jpg)
mkdir -p "$TMP/png"
node --input-type=module - "$HERE/lib/image.mjs" "$TMP/png" "${JPEGS[@]}" <<'JS'
import path from 'node:path';
const [lib, out, ...files] = process.argv.slice(2);
const { readImageBGR, writePNGFromBGR } = await import(lib);
for (const f of files) writePNGFromBGR(path.join(out, `${path.basename(f, '.jpg')}.png`), readImageBGR(f));
JS
PNGS=("$TMP"/png/img_*.png)

# run_both TAG IMAGE...: both pipelines side by side, one thread each.
run_both() {
  local tag="$1"; shift
  "$SKIFF" ocr "$@" --json --threads 1 --use_textline_orientation true --restore_spaces false >"$TMP/skiff_$tag.jsonl" 2>"$TMP/skiff_$tag.err" &
  local pid=$!
  node "$HERE/ocr_pipeline.mjs" "$@" --json --threads 1 --use_textline_orientation true \
    --det "$DET" --rec "$REC" --cls "$CLS" --dict "$DICT" >"$TMP/ort_$tag.jsonl" 2>"$TMP/ort_$tag.err" || {
    cat "$TMP/ort_$tag.err" >&2; die "ocr_pipeline.mjs failed"; }
  wait "$pid" || { cat "$TMP/skiff_$tag.err" >&2; die "skiff ocr failed"; }
}

# compare TAG MIN_RATIO: prints the agreement; fails below MIN_RATIO.
compare() {
node - "$TMP/skiff_$1.jsonl" "$TMP/ort_$1.jsonl" "$2" "$TMP/mismatches_$1.json" <<'JS'
const fs = require('fs');
const path = require('path');
const [sPath, oPath, minRatioArg, dumpPath] = process.argv.slice(2);
const load = (p) => new Map(fs.readFileSync(p, 'utf8').split('\n').filter(Boolean).map((l) => {
  const r = JSON.parse(l);
  return [r.input_path, r];
}));
const S = load(sPath), O = load(oPath);

const bbox = (q) => {
  const xs = q.map((p) => p[0]), ys = q.map((p) => p[1]);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
};
const area = (b) => Math.max(0, b[2] - b[0]) * Math.max(0, b[3] - b[1]);
const iou = (a, b) => {
  const i = area([Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])]);
  const u = area(a) + area(b) - i;
  return u > 0 ? i / u : 0;
};
const centre = (b) => [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2];
const holds = (b, p) => p[0] >= b[0] && p[0] <= b[2] && p[1] >= b[1] && p[1] <= b[3];
// Greedy one-to-one matching of two quad lists, best IoU first.
function match(qa, qb) {
  const ba = qa.map(bbox), bb = qb.map(bbox);
  const cand = [];
  ba.forEach((a, i) => bb.forEach((b, j) => {
    const v = iou(a, b);
    if (v >= 0.5 || (holds(a, centre(b)) && holds(b, centre(a)))) cand.push([v, i, j]);
  }));
  cand.sort((x, y) => y[0] - x[0] || x[1] - y[1] || x[2] - y[2]);
  const usedA = new Set(), usedB = new Set(), pairs = [];
  for (const [v, i, j] of cand) {
    if (usedA.has(i) || usedB.has(j)) continue;
    usedA.add(i); usedB.add(j); pairs.push({ i, j, iou: v });
  }
  return { pairs, onlyA: qa.map((_, i) => i).filter((i) => !usedA.has(i)), onlyB: qb.map((_, j) => j).filter((j) => !usedB.has(j)) };
}
const cornerDiff = (a, b) => Math.max(...a.map((p, k) => Math.max(Math.abs(p[0] - b[k][0]), Math.abs(p[1] - b[k][1]))));

const det = { skiff: 0, ort: 0, matched: 0, sameQuad: 0, iouSum: 0, maxCorner: 0, sameAngle: 0, sameOrder: 0, scoreDiff: 0 };
const rec = { lines: 0, identical: 0, onlySkiff: 0, onlyOrt: 0, scoreDiff: 0 };
const mismatches = [];
const missing = [];
for (const [img, o] of O) {
  const s = S.get(img);
  if (!s) { missing.push(img); continue; }
  // detections (every box, before the recognizer's score filter)
  det.skiff += s.dt_polys.length; det.ort += o.dt_polys.length;
  const dm = match(s.dt_polys, o.dt_polys);
  for (const { i, j, iou: v } of dm.pairs) {
    det.matched++; det.iouSum += v;
    const d = cornerDiff(s.dt_polys[i], o.dt_polys[j]);
    det.maxCorner = Math.max(det.maxCorner, d);
    if (d === 0) det.sameQuad++;
    if (i === j) det.sameOrder++;
    if (s.textline_orientation_angles[i] === o.textline_orientation_angles[j]) det.sameAngle++;
    det.scoreDiff = Math.max(det.scoreDiff, Math.abs(s.dt_scores[i] - o.dt_scores[j]));
  }
  // recognized lines
  const lm = match(s.rec_polys, o.rec_polys);
  rec.lines += lm.pairs.length + lm.onlyA.length + lm.onlyB.length;
  rec.onlySkiff += lm.onlyA.length; rec.onlyOrt += lm.onlyB.length;
  for (const { i, j, iou: v } of lm.pairs) {
    if (s.rec_texts[i] === o.rec_texts[j]) {
      rec.identical++;
      rec.scoreDiff = Math.max(rec.scoreDiff, Math.abs(s.rec_scores[i] - o.rec_scores[j]));
    } else {
      mismatches.push({ image: img, kind: 'text', iou: +v.toFixed(3),
        skiff: { text: s.rec_texts[i], score: s.rec_scores[i], poly: s.rec_polys[i] },
        ort: { text: o.rec_texts[j], score: o.rec_scores[j], poly: o.rec_polys[j] } });
    }
  }
  for (const i of lm.onlyA) mismatches.push({ image: img, kind: 'only skiff', skiff: { text: s.rec_texts[i], score: s.rec_scores[i], poly: s.rec_polys[i] } });
  for (const j of lm.onlyB) mismatches.push({ image: img, kind: 'only ORT', ort: { text: o.rec_texts[j], score: o.rec_scores[j], poly: o.rec_polys[j] } });
}
for (const img of S.keys()) if (!O.has(img)) missing.push(img);

const ratio = rec.lines ? rec.identical / rec.lines : 0;
const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(1)}%` : '-');
console.log(`images              ${O.size}${missing.length ? ` (${missing.length} missing on one side)` : ''}`);
console.log(`detections          skiff ${det.skiff}, ORT ${det.ort}, matched ${det.matched}`);
console.log(`  identical quads   ${det.sameQuad} (${pct(det.sameQuad, det.matched)}), mean IoU ${det.matched ? (det.iouSum / det.matched).toFixed(4) : '-'}, max corner diff ${det.maxCorner} px, max box-score diff ${det.scoreDiff.toExponential(2)}`);
console.log(`  same reading slot ${det.sameOrder} (${pct(det.sameOrder, det.matched)}), same orientation ${det.sameAngle} (${pct(det.sameAngle, det.matched)})`);
console.log(`lines               ${rec.lines} (${rec.onlySkiff} only in skiff, ${rec.onlyOrt} only in ORT)`);
console.log(`identical text      ${rec.identical}`);
console.log(`ratio               ${ratio.toFixed(4)}${Number(minRatioArg) > 0 ? ` (need >= ${minRatioArg})` : ''}`);
console.log(`max rec-score diff  ${rec.scoreDiff.toExponential(2)} (identical lines)`);
for (const m of mismatches) {
  const side = (x) => (x ? `${JSON.stringify(x.text)} ${x.score.toFixed(4)} [${x.poly.map((p) => p.join(',')).join(' ')}]` : '-');
  console.log(`MISMATCH ${m.kind} ${path.basename(m.image)}${m.iou !== undefined ? ` iou ${m.iou}` : ''}\n  skiff ${side(m.skiff)}\n  ORT   ${side(m.ort)}`);
}
fs.writeFileSync(dumpPath, `${JSON.stringify(mismatches, null, 1)}\n`);
process.exit(missing.length || ratio < Number(minRatioArg) ? 1 : 0);
JS
}

echo "ocr_parity: sample + $COUNT synthetic images (seed $SEED), same pixels on both sides (PNG)" >&2
run_both png "$SAMPLE" "${PNGS[@]}"
status=0
echo "== same pixels: ocr_sample.png + ${#PNGS[@]} synthetic images as PNG"
compare png "$MIN_RATIO" || status=1
if [ "$JPEG" = 1 ]; then
  echo "ocr_parity: the synthetic JPEGs as they are (each side's own decoder)" >&2
  run_both jpeg "${JPEGS[@]}"
  echo "== for information: the ${#JPEGS[@]} synthetic JPEGs, each side decoding them itself"
  compare jpeg 0 || true
fi
exit $status
