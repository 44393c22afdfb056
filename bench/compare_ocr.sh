#!/usr/bin/env bash
# Runs `skiff bench ocr` and the same PP-OCRv4 pipeline over ONNX Runtime
# (tests/tools/ort/ocr_pipeline.mjs --bench) on the same images, one thread count
# after the other on this machine, and prints median latencies and skiff/ORT
# ratios (< 1 means skiff is faster): end to end (file decode -> text) and per stage,
# plus pipeline load, first run and cold start (a new process OCR'ing one image,
# models cached, timed here the same way for both).
#   bench/compare_ocr.sh [IMAGE ...]        default: assets/samples/ocr_sample.png +
#                                           SYNTH synthetic images (skiff ocr synth)
#   MIXED=1 bench/compare_ocr.sh            the 40-image mixed folder of
#                                           bench/ocr_mixed_folder.sh (photos, pages, lines)
#   env: THREADS (1,2), REPEAT (5 timed runs per image), WARMUP (1), COLD (3 cold
#        starts per side and thread count), SYNTH (5), SEED (7),
#        SKIFF_BIN (build/bin/skiff), WHOLE (1: also the whole-process table)
# Whole process: one `skiff ocr IMAGES --json` process against one ocr_pipeline.mjs
# process over the same images (models cached), each run once per thread count:
# wall, user and system CPU seconds, peak RSS and minor page faults (getrusage of the child), as a
# user running a folder sees them. The peer runs with the fair-peer environment
# (bench/peer_env.sh).
# Stage boundaries differ slightly: skiff's det includes DB post-processing and
# box sorting (its post is cropping only), ORT's post holds them; compare
# det+post. Synthetic images are JPEGs: skiff decodes with libjpeg-turbo (OpenCV),
# the Node pipeline with jpeg-js (pure JavaScript), which shows in decode.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS="${THREADS:-1,2}"
REPEAT="${REPEAT:-5}"
WARMUP="${WARMUP:-1}"
COLD="${COLD:-3}"
SYNTH="${SYNTH:-5}"
SEED="${SEED:-7}"
SKIFF_BIN="${SKIFF_BIN:-build/bin/skiff}"

die() { echo "compare_ocr: error: $*" >&2; exit 2; }
[[ "$THREADS" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "THREADS must look like 1,2 (got '$THREADS')"
[ -x "$SKIFF_BIN" ] || die "$SKIFF_BIN not found (build skiff first, or set SKIFF_BIN)"
tests/tools/ort/setup.sh

DET="$("$SKIFF_BIN" zoo path ppocr-v4-det)/ch_PP-OCRv4_det_infer.onnx"
REC_DIR="$("$SKIFF_BIN" zoo path ppocr-v4-rec)"
CLS="$("$SKIFF_BIN" zoo path ppocr-mobile-v2-cls)/ch_ppocr_mobile_v2.0_cls_infer.onnx"
ORT_ARGS=(--det "$DET" --rec "$REC_DIR/ch_PP-OCRv4_rec_infer.onnx" --cls "$CLS" --dict "$REC_DIR/ppocr_keys_v1.txt"
          --use_textline_orientation true)

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
IMAGES=("$@")
if [ ${#IMAGES[@]} -eq 0 ] && [ "${MIXED:-0}" = 1 ]; then
  SKIFF_BIN="$SKIFF_BIN" bench/ocr_mixed_folder.sh "$OUT/mixed" >/dev/null
  IMAGES=("$OUT"/mixed/*)
elif [ ${#IMAGES[@]} -eq 0 ]; then
  IMAGES=(assets/samples/ocr_sample.png)
  if [ "$SYNTH" -gt 0 ]; then
    "$SKIFF_BIN" ocr synth "$OUT/synth" --count "$SYNTH" --seed "$SEED" 2>/dev/null
    IMAGES+=("$OUT"/synth/img_*.jpg)
  fi
fi
for f in "${IMAGES[@]}"; do [ -f "$f" ] || die "image '$f' does not exist"; done

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# cold TAG THREADS CMD...: runs CMD once untimed, then COLD times; one line per timed run.
cold() {
  local tag="$1" t="$2"; shift 2
  "$@" >/dev/null
  for _ in $(seq "$COLD"); do
    local t0; t0=$(now_ms)
    "$@" >/dev/null
    printf '%s\t%s\t%s\n' "$tag" "$t" "$(( $(now_ms) - t0 ))" >> "$OUT/cold.tsv"
  done
}

touch "$OUT/cold.tsv"
# whole TAG THREADS CMD...: one run of CMD; appends TAG, threads, wall s, user s, sys s, peak RSS MB,
# minor page faults.
whole() {
  local tag="$1" t="$2"; shift 2
  python3 - "$tag" "$t" "$@" >> "$OUT/whole.tsv" <<'PY'
import resource, subprocess, sys, time
tag, t, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
t0 = time.monotonic()
subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
wall = time.monotonic() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{tag}\t{t}\t{wall:.2f}\t{r.ru_utime:.2f}\t{r.ru_stime:.2f}\t{r.ru_maxrss / 1024:.0f}\t{r.ru_minflt}")
PY
}
touch "$OUT/whole.tsv"
uptime >&2
for t in ${THREADS//,/ }; do
  echo "compare_ocr: skiff, $t thread(s), ${#IMAGES[@]} images x $REPEAT runs" >&2
  "$SKIFF_BIN" bench ocr "${IMAGES[@]}" --threads-list "$t" --repeat "$REPEAT" --warmup "$WARMUP" --cold-runs 0 --json \
    >> "$OUT/skiff.jsonl" || die "skiff bench ocr failed ($t threads)"
  echo "compare_ocr: ONNX Runtime, $t thread(s)" >&2
  node tests/tools/ort/ocr_pipeline.mjs "${IMAGES[@]}" "${ORT_ARGS[@]}" --threads "$t" --bench "$REPEAT" \
    --warmup "$WARMUP" --json >> "$OUT/ort.jsonl" || die "ocr_pipeline.mjs --bench failed ($t threads)"
  if [ "${WHOLE:-1}" = 1 ]; then
    echo "compare_ocr: whole process, $t thread(s)" >&2
    whole skiff "$t" "$SKIFF_BIN" ocr "${IMAGES[@]}" --json --threads "$t"
    whole ort "$t" env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE node tests/tools/ort/ocr_pipeline.mjs "${IMAGES[@]}" \
      "${ORT_ARGS[@]}" --threads "$t" --json
  fi
  if [ "$COLD" -gt 0 ]; then
    echo "compare_ocr: cold starts, $t thread(s)" >&2
    cold skiff "$t" "$SKIFF_BIN" ocr "${IMAGES[0]}" --threads "$t"
    cold ort "$t" node tests/tools/ort/ocr_pipeline.mjs "${IMAGES[0]}" "${ORT_ARGS[@]}" --threads "$t"
  fi
done
uptime >&2

if [ -s "$OUT/whole.tsv" ]; then
  echo "whole process over ${#IMAGES[@]} images (one run each; CPU seconds from getrusage)"
  printf '%-8s%4s%9s%9s%9s%10s%10s%10s\n' side thr wall_s user_s sys_s sys_% rss_MB minflt
  awk -F'\t' '{printf "%-8s%4s%9s%9s%9s%9.1f%%%10s%10s\n", $1, $2, $3, $4, $5, 100 * $5 / $3, $6, $7}' "$OUT/whole.tsv"
  awk -F'\t' '{w[$1 FS $2] = $3; r[$1 FS $2] = $6; t[$2] = 1}
    END {for (k in t) if ((("ort" FS k) in w) && (("skiff" FS k) in w))
      printf "threads %s: wall skiff/ORT %.2f, peak RSS skiff/ORT %.2f\n", k, w["skiff" FS k] / w["ort" FS k], r["skiff" FS k] / r["ort" FS k]}' "$OUT/whole.tsv"
  echo
fi

node - "$OUT/skiff.jsonl" "$OUT/ort.jsonl" "$OUT/cold.tsv" "${IMAGES[0]}" <<'JS'
const fs = require('fs');
const path = require('path');
const [sPath, oPath, coldPath, firstImage] = process.argv.slice(2);
const lines = (p) => fs.readFileSync(p, 'utf8').split('\n').filter(Boolean);
const load = (p) => lines(p).map((l) => JSON.parse(l));
const S = load(sPath), O = load(oPath);
const median = (v) => {
  const a = [...v].sort((x, y) => x - y), n = a.length;
  return n ? (n % 2 ? a[(n - 1) / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2])) : undefined;
};
// Nearest-rank 90th percentile.
const p90 = (v) => {
  const a = [...v].sort((x, y) => x - y);
  return a.length ? a[Math.ceil(0.9 * a.length) - 1] : undefined;
};
const cold = {};
for (const l of lines(coldPath)) {
  const [tag, t, ms] = l.split('\t');
  ((cold[`${tag}\t${t}`] ??= [])).push(Number(ms));
}
const threads = [...new Set(S.map((r) => r.threads))];
const get = (rows, t, img) => rows.find((r) => r.threads === t && r.image === img) ?? {};
const ms = (x) => (typeof x === 'number' ? x.toFixed(1) : '-');
const ratio = (a, b) => (typeof a === 'number' && typeof b === 'number' && b > 0 ? (a / b).toFixed(2) : '-');
const pad = (x, n) => String(x).padStart(n);
const row = (name, t, a, b) => console.log(`${name.padEnd(22)}${pad(t, 4)}${pad(ms(a), 11)}${pad(ms(b), 11)}${pad(ratio(a, b), 8)}`);
const header = (first) => console.log(`${first.padEnd(22)}${pad('thr', 4)}${pad('skiff ms', 11)}${pad('ORT ms', 11)}${pad('ratio', 8)}`);

const n = S.find((r) => r.image === '(median)')?.images ?? 0;
const runs = S.find((r) => r.image === '(median)')?.runs ?? 0;
console.log(`medians over ${n} images (each the median of ${runs} runs); e2e = file decode -> text`);
header('stage');
for (const t of threads) {
  const a = get(S, t, '(median)'), b = get(O, t, '(median)');
  for (const k of ['e2e', 'decode', 'det', 'post', 'cls', 'rec']) row(k, t, a[`${k}_ms`], b[`${k}_ms`]);
  // medians of per-image det+post (stage boundaries differ between the two)
  const dp = (rows) => median(rows.filter((r) => r.threads === t && r.image !== '(median)').map((r) => r.det_ms + r.post_ms));
  row('det+post', t, dp(S), dp(O));
  const e2e = (rows) => rows.filter((r) => r.threads === t && r.image !== '(median)').map((r) => r.e2e_ms);
  row('e2e p90 (per image)', t, p90(e2e(S)), p90(e2e(O)));
  row('sum of images e2e', t, a.sum_e2e_ms, b.sum_e2e_ms);
  row('pipeline load', t, a.load_ms, b.load_ms);
  row('first run', t, a.first_run_ms, b.first_run_ms);
  row('cold start', t, median(cold[`skiff\t${t}`] ?? []), median(cold[`ort\t${t}`] ?? []));
}
console.log(`\ncold start: a new process OCR'ing ${path.basename(firstImage)} (models cached), median of the timed runs`);
console.log('\nper image, end to end');
header('image');
for (const t of threads) {
  for (const a of S.filter((r) => r.threads === t && r.image !== '(median)')) {
    const b = get(O, t, a.image);
    const same = b.image === undefined ? '  (no ORT row: not compared)'
      : a.lines === b.lines ? '' : `  (lines: skiff ${a.lines}, ORT ${b.lines})`;
    console.log(`${path.basename(a.image).padEnd(22)}${pad(t, 4)}${pad(ms(a.e2e_ms), 11)}${pad(ms(b.e2e_ms), 11)}${pad(ratio(a.e2e_ms, b.e2e_ms), 8)}${same}`);
  }
  for (const b of O.filter((r) => r.threads === t && r.image !== '(median)' && get(S, t, r.image).image === undefined))
    console.log(`${path.basename(b.image).padEnd(22)}${pad(t, 4)}${pad('-', 11)}${pad(ms(b.e2e_ms), 11)}${pad('-', 8)}  (no skiff row: not compared)`);
}
const sThreads = new Set(S.map((r) => r.threads)), oThreads = new Set(O.map((r) => r.threads));
for (const t of oThreads) if (!sThreads.has(t)) console.log(`not compared: ${t} thread(s) ran on ONNX Runtime only`);
JS
