#!/usr/bin/env node
// PP-OCRv4 text detection + orientation + recognition over ONNX Runtime, following
// PaddleOCR's tools/infer/predict_system.py (TextSystem) step by step; the result
// uses the keys of PaddleOCR 3.x's OCR pipeline. Reference for skiff's OCR pipeline.
import path from 'node:path';
import { runMain, parseArgs, requireFile, UsageError, createSession, loadOrt, loadCv } from './lib/common.mjs';
import { readImageBGR, bgrToMat } from './lib/image.mjs';
import {
  detPreprocess,
  dbPostprocess,
  filterDetResults,
  sortedBoxOrder,
  getRotateCropImage,
  resizeNormPad,
  loadCharacters,
  ctcDecode,
  rotate180,
} from './lib/ppocr.mjs';

const USAGE = `
usage: node ocr_pipeline.mjs IMAGE [IMAGE ...] --det DET.onnx --rec REC.onnx
                             [--cls CLS.onnx] --dict ppocr_keys_v1.txt
                             [--use_textline_orientation true|false] [--threads N] [--json]
                             [--bench N [--warmup W]]

  --det, --rec, --cls    ch_PP-OCRv4_det_infer.onnx, ch_PP-OCRv4_rec_infer.onnx,
                         ch_ppocr_mobile_v2.0_cls_infer.onnx
  --use_textline_orientation  run the 0/180 degree classifier (default true; needs --cls)
  --threads N            ORT intra-op threads per model (default 1)
  --json                 one JSON object per image per line (PaddleOCR 3.x keys)
  --limit_side_len N     detector long-side limit (default 960)
  --drop_score X         drop recognized lines scoring below X (default 0.5)
  --bench N              benchmark instead: after loading and W warm-up runs on the first
                         image (--warmup, default 1), read + OCR each image N times and
                         print per-image medians of the end-to-end time (decode -> text)
                         and of its stages, then the medians over the images (the keys of
                         skiff bench ocr --json; see bench/compare_ocr.sh)
`;

const SPEC = {
  det: { type: 'string' },
  rec: { type: 'string' },
  cls: { type: 'string' },
  dict: { type: 'string' },
  use_textline_orientation: { type: 'bool', default: true },
  threads: { type: 'int', default: 1, min: 1 },
  json: { type: 'bool', default: false },
  limit_side_len: { type: 'int', default: 960, min: 32 },
  drop_score: { type: 'string', default: '0.5' },
  bench: { type: 'int', default: 0, min: 0 },
  warmup: { type: 'int', default: 1, min: 1 },
};

const REC_BATCH = 6;
const CLS_BATCH = 6;
const CLS_THRESH = 0.9;
const CLS_LABELS = ['0', '180'];

// np.argsort of the width/height ratios (stable for ties, as NumPy's sort is on
// these small inputs).
function ratioOrder(imgs) {
  const r = imgs.map((im) => im.width / im.height);
  return r.map((_, i) => i).sort((a, b) => r[a] - r[b]);
}

async function run(ort, session, data, shape) {
  const out = await session.run({ [session.inputNames[0]]: new ort.Tensor('float32', data, shape) });
  return out[session.outputNames[0]];
}

// TextClassifier: batches of 6 in aspect-ratio order, 48x192 inputs; a crop
// labelled "180" with probability > 0.9 is turned 180 degrees. Returns the flags.
async function classify(ort, cv, session, crops) {
  const rotated = new Array(crops.length).fill(0);
  const order = ratioOrder(crops);
  for (let b = 0; b < order.length; b += CLS_BATCH) {
    const ids = order.slice(b, b + CLS_BATCH);
    const plane = 3 * 48 * 192;
    const input = new Float32Array(ids.length * plane);
    ids.forEach((id, k) => resizeNormPad(cv, crops[id], 48, 192, input, k * plane));
    const out = await run(ort, session, input, [ids.length, 3, 48, 192]);
    const nc = Number(out.dims[1]);
    ids.forEach((id, k) => {
      let best = 0;
      for (let c = 1; c < nc; c++) if (out.data[k * nc + c] > out.data[k * nc + best]) best = c;
      const score = out.data[k * nc + best];
      if (CLS_LABELS[best] === '180' && score > CLS_THRESH) {
        crops[id] = rotate180(crops[id]);
        rotated[id] = 1;
      }
    });
  }
  return rotated;
}

// TextRecognizer: batches of 6 in aspect-ratio order, height 48, width
// int(48 * max(320/48, widest ratio in the batch)); CTC greedy decoding.
async function recognize(ort, cv, session, crops, characters) {
  const res = new Array(crops.length);
  const order = ratioOrder(crops);
  for (let b = 0; b < order.length; b += REC_BATCH) {
    const ids = order.slice(b, b + REC_BATCH);
    let maxRatio = 320 / 48;
    for (const id of ids) maxRatio = Math.max(maxRatio, crops[id].width / crops[id].height);
    const imgW = Math.trunc(48 * maxRatio);
    const plane = 3 * 48 * imgW;
    const input = new Float32Array(ids.length * plane);
    ids.forEach((id, k) => resizeNormPad(cv, crops[id], 48, imgW, input, k * plane));
    const out = await run(ort, session, input, [ids.length, 3, 48, imgW]);
    const [, T, C] = out.dims.map(Number);
    if (C !== characters.length)
      throw new Error(`the recognizer has ${C} classes but the dictionary gives ${characters.length} (blank + lines + space)`);
    ids.forEach((id, k) => {
      res[id] = ctcDecode(out.data, T, C, characters, k * T * C);
    });
  }
  return res;
}

async function ocrImage(ctx, imagePath) {
  const { ort, cv, sessions, characters, opts } = ctx;
  const now = () => performance.now();
  const t0 = now();
  const img = readImageBGR(imagePath);
  const decode = now() - t0;

  // detection: resize + normalize + model
  let t = now();
  const pre = detPreprocess(cv, img, opts.limit_side_len);
  const detOut = await run(ort, sessions.det, pre.data, pre.shape);
  const det = now() - t;

  // DB post-processing, filtering, reading order, crops
  t = now();
  const [, , ph, pw] = detOut.dims.map(Number);
  const db = dbPostprocess(cv, detOut.data, ph, pw, img.width, img.height, { thresh: 0.3, boxThresh: 0.6, unclipRatio: 1.5 });
  const kept = filterDetResults(db.boxes, db.scores, img.height, img.width);
  const order = sortedBoxOrder(kept.boxes);
  const dtPolys = order.map((i) => kept.boxes[i]);
  const dtScores = order.map((i) => kept.scores[i]);
  const srcMat = bgrToMat(cv, img);
  const crops = dtPolys.map((box) => getRotateCropImage(cv, srcMat, box));
  srcMat.delete();
  let post = now() - t;

  // text-line orientation
  t = now();
  let angles = new Array(crops.length).fill(-1);
  if (opts.use_textline_orientation && crops.length) angles = await classify(ort, cv, sessions.cls, crops);
  const cls = now() - t;

  // recognition
  t = now();
  const rec = crops.length ? await recognize(ort, cv, sessions.rec, crops, characters) : [];
  const recMs = now() - t;

  t = now();
  const recTexts = [];
  const recScores = [];
  const recPolys = [];
  rec.forEach((r, i) => {
    if (r.score >= ctx.dropScore) {
      recTexts.push(r.text);
      recScores.push(r.score);
      recPolys.push(dtPolys[i]);
    }
  });
  const recBoxes = recPolys.map((p) => {
    const xs = p.map((q) => q[0]);
    const ys = p.map((q) => q[1]);
    return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  });
  post += now() - t;
  const r3 = (x) => Math.round(x * 1000) / 1000;
  return {
    input_path: imagePath,
    dt_polys: dtPolys,
    dt_scores: dtScores,
    rec_texts: recTexts,
    rec_scores: recScores,
    rec_polys: recPolys,
    rec_boxes: recBoxes,
    textline_orientation_angles: angles,
    timings_ms: { total: r3(now() - t0), decode: r3(decode), det: r3(det), cls: r3(cls), rec: r3(recMs), post: r3(post) },
  };
}

const STAGES = ['e2e', 'decode', 'det', 'cls', 'rec', 'post'];

function median(v) {
  const a = [...v].sort((x, y) => x - y);
  const n = a.length;
  if (!n) return 0;
  return n % 2 ? a[(n - 1) / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
}

// Per-stage medians of samples {e2e, decode, det, cls, rec, post} (ms).
function medians(samples) {
  return Object.fromEntries(STAGES.map((k) => [`${k}_ms`, median(samples.map((s) => s[k]))]));
}

// Unrounded stage times of one run, the way `skiff bench ocr` splits them.
async function timedRun(ctx, imagePath) {
  const r = await ocrImage(ctx, imagePath);
  const t = r.timings_ms;
  return { sample: { e2e: t.total, decode: t.decode, det: t.det, cls: t.cls, rec: t.rec, post: t.post }, lines: r.rec_texts.length };
}

// --bench N: the measurement of `skiff bench ocr` (same JSON keys) over ORT.
async function benchmark(ctx, images, loadMs) {
  const { opts } = ctx;
  const threads = opts.threads;
  const t = performance.now();
  await timedRun(ctx, images[0]);
  const firstMs = performance.now() - t;
  for (let i = 1; i < opts.warmup; i++) await timedRun(ctx, images[0]);
  const perImage = [];
  const row = (name, m, extra = '') =>
    console.log(`${name.padEnd(28)}${STAGES.map((k, i) => m[`${k}_ms`].toFixed(1).padStart(i ? 9 : 10)).join('')}  ${extra}`);
  if (!opts.json) {
    console.log(`${'image'.padEnd(28)}${STAGES.map((k, i) => k.padStart(i ? 9 : 10)).join('')}  (medians of ${opts.bench} runs, ms; ONNX Runtime)`);
    console.log(`-- threads ${threads}: pipeline load ${loadMs.toFixed(0)} ms, first run ${firstMs.toFixed(0)} ms`);
  }
  for (const img of images) {
    const runs = [];
    let lines = 0;
    for (let r = 0; r < opts.bench; r++) {
      const res = await timedRun(ctx, img);
      runs.push(res.sample);
      lines = res.lines;
    }
    const m = medians(runs);
    perImage.push(m);
    if (opts.json) console.log(JSON.stringify({ bench: 'ocr', image: img, threads, runs: opts.bench, lines, ...m }));
    else row(path.basename(img), m, `${lines} lines`);
  }
  const overall = Object.fromEntries(STAGES.map((k) => [`${k}_ms`, median(perImage.map((m) => m[`${k}_ms`]))]));
  const sumE2e = perImage.reduce((a, m) => a + m.e2e_ms, 0);
  if (opts.json) {
    console.log(JSON.stringify({
      bench: 'ocr', image: '(median)', threads, images: images.length, runs: opts.bench, ...overall,
      sum_e2e_ms: sumE2e, load_ms: loadMs, first_run_ms: firstMs, runtime: `onnxruntime-node ${ctx.ort.env?.versions?.common ?? ''}`.trim(),
    }));
  } else {
    row('(median of images)', overall);
    console.log(`(sum of images) e2e ${sumE2e.toFixed(1)} ms`);
  }
}

runMain('ocr_pipeline', USAGE, async () => {
  const { opts, positional } = parseArgs(process.argv.slice(2), SPEC);
  if (opts.help) {
    process.stdout.write(USAGE.trimStart());
    return;
  }
  if (!positional.length) throw new UsageError('no image given');
  requireFile(opts.det, '--det model');
  requireFile(opts.rec, '--rec model');
  requireFile(opts.dict, '--dict file');
  if (opts.use_textline_orientation) {
    if (!opts.cls) throw new UsageError('--cls is required unless --use_textline_orientation false');
    requireFile(opts.cls, '--cls model');
  }
  const dropScore = Number(opts.drop_score);
  if (!Number.isFinite(dropScore)) throw new UsageError(`--drop_score takes a number, not '${opts.drop_score}'`);
  for (const p of positional) requireFile(p, 'image');
  const tLoad = performance.now();
  const ort = await loadOrt();
  const { cv } = await loadCv();
  const sessions = {
    det: await createSession(opts.det, opts.threads),
    rec: await createSession(opts.rec, opts.threads),
    cls: opts.use_textline_orientation ? await createSession(opts.cls, opts.threads) : null,
  };
  const loadMs = performance.now() - tLoad;
  const ctx = { ort, cv, sessions, characters: loadCharacters(opts.dict), opts, dropScore };
  if (opts.bench > 0) {
    await benchmark(ctx, positional, loadMs);
    return;
  }
  let failed = 0;
  for (const p of positional) {
    let res;
    try {
      res = await ocrImage(ctx, p);
    } catch (e) {
      process.stderr.write(`ocr_pipeline: error: ${p}: ${e.message}\n`);
      failed++;
      continue;
    }
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(res)}\n`);
    } else {
      const tm = res.timings_ms;
      console.log(
        `${path.basename(p)}: ${res.dt_polys.length} boxes, ${res.rec_texts.length} lines ` +
          `(total ${tm.total.toFixed(1)} ms: det ${tm.det.toFixed(1)}, post ${tm.post.toFixed(1)}, cls ${tm.cls.toFixed(1)}, rec ${tm.rec.toFixed(1)})`,
      );
      res.rec_texts.forEach((text, i) => {
        const poly = res.rec_polys[i].map((q) => q.join(',')).join(' ');
        console.log(`  [${poly}] ${res.rec_scores[i].toFixed(4)} ${JSON.stringify(text)}`);
      });
    }
  }
  if (failed) process.exit(1);
});
