#!/usr/bin/env bash
# Runs `skiff bench model` and ONNX Runtime (onnxruntime-node, CPU EP) on the
# PP-OCR models and NanoDet (the zoo's TF.js model, converted to ONNX with
# `skiff graph convert` so both sides run the same file), one case after the
# other on this machine, and prints
# skiff/ORT median-latency ratios (< 1 means skiff is faster).
#   bench/compare_models.sh [MODEL_DIR] [threads, default 1,2]
#   Without MODEL_DIR the zoo's cached models are used. MODEL_DIR (or env SKIFF_OCR_MODEL_DIR) holds ch_PP-OCRv4_det_infer.onnx,
#   ch_PP-OCRv4_rec_infer.onnx and ch_ppocr_mobile_v2.0_cls_infer.onnx; env
#   DET_MODEL / REC_MODEL / CLS_MODEL name the files one by one instead; NANODET_MODEL an
#   ONNX NanoDet (default: the zoo model converted by `skiff graph convert`).
#   env: SKIFF_BIN (default build/bin/skiff), WARMUP (3), ITERS (20),
#        ORT_ONLY=1 to run only the ONNX Runtime half, CHECK=0 to skip the check below.
# Before timing, every case runs once on both sides on the same seeded input
# (skiff_run_model next to SKIFF_BIN, tests/tools/ort/run_model.mjs): outputs must
# have the same names and shapes and agree within 1e-3 (max abs difference), or the
# script stops (exit 1). A case one side did not time is listed, not dropped.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL_DIR="${1:-${SKIFF_OCR_MODEL_DIR:-}}"
THREADS="${2:-1,2}"
SKIFF_BIN="${SKIFF_BIN:-build/bin/skiff}"
WARMUP="${WARMUP:-3}"
ITERS="${ITERS:-20}"
ORT_ONLY="${ORT_ONLY:-0}"

die() { echo "compare_models: error: $*" >&2; exit 2; }
model() {  # model VAR FILE ZOO_NAME
  local v="${!1:-}"
  if [ -z "$v" ]; then
    if [ -n "$MODEL_DIR" ]; then
      v="$MODEL_DIR/$2"
    else  # default: the zoo's cached copy (pulled on first use)
      v="$("$SKIFF_BIN" zoo path "$3")/$2" || die "cannot get zoo model $3 (or give MODEL_DIR / $1)"
    fi
  fi
  [ -f "$v" ] || die "model file '$v' does not exist"
  echo "$v"
}
DET="$(model DET_MODEL ch_PP-OCRv4_det_infer.onnx ppocr-v4-det)"
REC="$(model REC_MODEL ch_PP-OCRv4_rec_infer.onnx ppocr-v4-rec)"
CLS="$(model CLS_MODEL ch_ppocr_mobile_v2.0_cls_infer.onnx ppocr-mobile-v2-cls)"
[[ "$THREADS" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "threads must look like 1,2 (got '$THREADS')"
if [ "$ORT_ONLY" != 1 ] && [ ! -x "$SKIFF_BIN" ]; then
  die "$SKIFF_BIN not found (build skiff first, or set SKIFF_BIN, or ORT_ONLY=1 for the ONNX Runtime half)"
fi
tests/tools/ort/setup.sh

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
NANODET="${NANODET_MODEL:-$OUT/nanodet.onnx}"
if [ -z "${NANODET_MODEL:-}" ]; then
  "$SKIFF_BIN" graph convert nanodet-coco "$NANODET" >&2 || die "cannot convert the zoo's nanodet-coco to ONNX"
fi
CASES_CHECKED=0
CASES=(
  "det 960x960|$DET|x:1x3x960x960"
  "det 640x640|$DET|x:1x3x640x640"
  "rec 8x48x320|$REC|x:8x3x48x320"
  "rec 1x48x320|$REC|x:1x3x48x320"
  "cls 8x48x192|$CLS|x:8x3x48x192"
  "nanodet 416x416|$NANODET|input_1:1x3x416x416"
)
status=0
if [ "$ORT_ONLY" != 1 ] && [ "${CHECK:-1}" != 0 ]; then
  RUN_MODEL="$(dirname "$SKIFF_BIN")/skiff_run_model"
  [ -x "$RUN_MODEL" ] || die "$RUN_MODEL not found (build the skiff_run_model target, or CHECK=0)"
  for c in "${CASES[@]}"; do
    IFS='|' read -r name file input <<<"$c"
    tag="${name// /_}"
    "$RUN_MODEL" "$file" --input "$input" "$OUT/$tag.in.safetensors" "$OUT/$tag.skiff.safetensors" ||
      die "skiff_run_model failed on $name"
    node tests/tools/ort/run_model.mjs "$file" "$OUT/$tag.in.safetensors" "$OUT/$tag.ort.safetensors" >/dev/null ||
      die "run_model.mjs (ONNX Runtime) failed on $name"
    node --input-type=module - "$name" "$OUT/$tag.skiff.safetensors" "$OUT/$tag.ort.safetensors" <<'JS' || exit 1
const { readSafetensors } = await import(process.cwd() + '/tests/tools/ort/lib/safetensors.mjs');
const [name, sPath, oPath] = process.argv.slice(2);
const s = readSafetensors(sPath).tensors, o = readSafetensors(oPath).tensors;
const bad = [];
for (const k of new Set([...s.keys(), ...o.keys()])) {
  const a = s.get(k), b = o.get(k);
  if (!a || !b) { bad.push(`output ${k} only on the ${a ? 'skiff' : 'ONNX Runtime'} side`); continue; }
  if (a.shape.join('x') !== b.shape.join('x')) { bad.push(`output ${k}: shape ${a.shape.join('x')} vs ${b.shape.join('x')}`); continue; }
  let d = 0, sum = 0;
  for (let i = 0; i < a.data.length; ++i) { d = Math.max(d, Math.abs(a.data[i] - b.data[i])); sum += Math.abs(a.data[i]); }
  console.error(`compare_models: ${name}: ${k} ${a.shape.join('x')}, max |skiff - ORT| = ${d.toExponential(2)}, sum |out| ${sum.toPrecision(8)}`);
  if (!(d <= 1e-3)) bad.push(`output ${k}: max abs difference ${d}`);
}
for (const b of bad) console.error(`compare_models: MISMATCH ${name}: ${b}`);
if (bad.length) { console.error('compare_models: the two sides do not compute the same thing; not timing them'); process.exit(1); }
JS
    CASES_CHECKED=$((CASES_CHECKED + 1))
  done
  echo "compare_models: $CASES_CHECKED cases give the same outputs on both sides" >&2
fi
for t in ${THREADS//,/ }; do
  for c in "${CASES[@]}"; do
    IFS='|' read -r name file input <<<"$c"
    echo "compare_models: $name, $t thread(s)" >&2
    if [ "$ORT_ONLY" != 1 ]; then
      if ! s=$("$SKIFF_BIN" bench model "$file" --input "$input" --threads "$t" --warmup "$WARMUP" --iters "$ITERS" --json); then
        echo "compare_models: skiff failed on $name ($t threads)" >&2; s='{}'; status=1
      fi
      printf '%s\t%s\t%s\n' "$name" "$t" "$(tail -n1 <<<"$s")" >> "$OUT/skiff.tsv"
    fi
    if ! o=$(node bench/ort/bench_model.mjs "$file" --input "$input" --threads "$t" --warmup "$WARMUP" --iters "$ITERS" --json); then
      echo "compare_models: ORT failed on $name ($t threads)" >&2; o='{}'; status=1
    fi
    printf '%s\t%s\t%s\n' "$name" "$t" "$(tail -n1 <<<"$o")" >> "$OUT/ort.tsv"
  done
done
touch "$OUT/skiff.tsv"
node - "$OUT/skiff.tsv" "$OUT/ort.tsv" <<'JS'
const fs = require('fs');
const load = (p) => {
  const m = new Map();
  for (const line of fs.readFileSync(p, 'utf8').split('\n').filter(Boolean)) {
    const [name, t, json] = line.split('\t');
    let r = {};
    try { r = JSON.parse(json); } catch { r = {}; }
    m.set(`${name}\t${t}`, { name, t, r });
  }
  return m;
};
const s = load(process.argv[2]), o = load(process.argv[3]);
const only = [...s.keys()].filter((k) => !o.has(k)).map((k) => `${k.replace('\t', ' thr ')} (skiff only)`)
  .concat([...o.keys()].filter((k) => !s.has(k)).map((k) => `${k.replace('\t', ' thr ')} (ORT only)`));
const ms = (x) => (typeof x === 'number' ? x.toFixed(2) : '-');
const mb = (x) => (typeof x === 'number' ? x.toFixed(1) : '-');
const pad = (x, n) => String(x).padStart(n);
console.log(`${'case'.padEnd(14)}${pad('thr', 4)}${pad('skiff ms', 11)}${pad('ORT ms', 11)}${pad('ratio', 8)}${pad('skiff p90', 11)}${pad('ORT p90', 11)}${pad('skiff MB', 10)}${pad('ORT MB', 9)}`);
for (const [key, { name, t, r: b }] of o) {
  const a = s.get(key)?.r ?? {};
  const ratio = typeof a.median_ms === 'number' && typeof b.median_ms === 'number' ? (a.median_ms / b.median_ms).toFixed(2) : '-';
  const note = typeof a.median_ms !== 'number' ? '  skiff did not time it' : typeof b.median_ms !== 'number' ? '  ORT did not time it' : '';
  console.log(`${name.padEnd(14)}${pad(t, 4)}${pad(ms(a.median_ms), 11)}${pad(ms(b.median_ms), 11)}${pad(ratio, 8)}${pad(ms(a.p90_ms), 11)}${pad(ms(b.p90_ms), 11)}${pad(mb(a.peak_rss_mb), 10)}${pad(mb(b.peak_rss_mb), 9)}${note}`);
}
for (const k of only) console.log(`not compared: ${k}`);
JS
exit $status
