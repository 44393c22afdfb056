#!/usr/bin/env node
// `skiff det` over ONNX Runtime: the same NanoDet (an ONNX file from
// `skiff graph convert nanodet-coco`), the same pre-processing (keep-ratio
// letterbox with OpenCV's INTER_LINEAR resize, BGR mean/std) and the same
// post-processing (GFL decoding of the 1000 best cells per level, class-aware
// NMS at IoU 0.6, at most 100 boxes): the peer side of bench/compare_det.sh.
// Prints one JSON object per image ({input_path, boxes, timings_ms}) and a
// summary line on stderr.
import fs from 'node:fs';
import path from 'node:path';
import { runMain, parseArgs, requireFile, UsageError, createSession, loadOrt, loadCv } from '../../tests/tools/ort/lib/common.mjs';
import { readImageBGR, bgrToMat, matToBGR } from '../../tests/tools/ort/lib/image.mjs';

const USAGE = `
usage: node det_pipeline.mjs NANODET.onnx IMAGE|DIR ... [--threads 1] [--threshold 0.35] [--quiet]
`;
const MEAN = [103.53, 116.28, 123.675];
const STD = [57.375, 57.12, 58.395];

function listImages(args) {
  const out = [];
  for (const a of args) {
    if (fs.statSync(a).isDirectory()) {
      out.push(...fs.readdirSync(a).filter((f) => /\.(png|jpe?g|bmp)$/i.test(f)).sort().map((f) => path.join(a, f)));
    } else out.push(a);
  }
  return out;
}

function letterbox(cv, img, W, H) {
  const scale = Math.min(W / img.width, H / img.height);
  const w = Math.max(1, Math.round(img.width * scale)), h = Math.max(1, Math.round(img.height * scale));
  const offX = Math.trunc((W - w) / 2), offY = Math.trunc((H - h) / 2);
  const src = bgrToMat(cv, img);
  const dst = new cv.Mat();
  cv.resize(src, dst, new cv.Size(w, h), 0, 0, cv.INTER_LINEAR);
  const small = matToBGR(dst);
  src.delete();
  dst.delete();
  const plane = W * H;
  const out = new Float32Array(3 * plane);
  for (let c = 0; c < 3; ++c) out.fill(-MEAN[c] / STD[c], c * plane, (c + 1) * plane);
  for (let y = 0; y < h; ++y)
    for (let x = 0; x < w; ++x)
      for (let c = 0; c < 3; ++c)
        out[c * plane + (y + offY) * W + x + offX] = (small.data[3 * (y * w + x) + c] - MEAN[c]) / STD[c];
  return { data: out, scale, offX, offY };
}

function integral(logits, o, bins) {
  let top = -Infinity;
  for (let i = 0; i < bins; ++i) top = Math.max(top, logits[o + i]);
  let sum = 0, weighted = 0;
  for (let i = 0; i < bins; ++i) {
    const e = Math.exp(logits[o + i] - top);
    sum += e;
    weighted += e * i;
  }
  return weighted / sum;
}

function iou(a, b) {
  const iw = Math.min(a[2], b[2]) - Math.max(a[0], b[0]), ih = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  const inter = iw > 0 && ih > 0 ? iw * ih : 0;
  const area = (r) => (r[2] > r[0] && r[3] > r[1] ? (r[2] - r[0]) * (r[3] - r[1]) : 0);
  const u = area(a) + area(b) - inter;
  return u > 0 ? inter / u : 0;
}

function decode(levels, threshold, W, H, classes = 80, bins = 11) {
  const out = [];
  const clamp = (v, hi) => Math.min(Math.max(v, 0), hi);
  for (const { scores, boxes, stride } of levels) {
    const cells = scores.length / classes, gw = W / stride;
    const best = new Float32Array(cells);
    for (let c = 0; c < cells; ++c) {
      let m = -Infinity;
      for (let k = 0; k < classes; ++k) m = Math.max(m, scores[c * classes + k]);
      best[c] = m;
    }
    let order = [...Array(cells).keys()];
    if (cells > 1000) order = order.sort((a, b) => best[b] - best[a]).slice(0, 1000).sort((a, b) => a - b);
    for (const c of order) {
      if (best[c] < threshold) continue;
      const cx = ((c % gw) + 0.5) * stride, cy = (Math.trunc(c / gw) + 0.5) * stride, o = c * 4 * bins;
      const box = [clamp(cx - integral(boxes, o, bins) * stride, W), clamp(cy - integral(boxes, o + bins, bins) * stride, H),
                   clamp(cx + integral(boxes, o + 2 * bins, bins) * stride, W), clamp(cy + integral(boxes, o + 3 * bins, bins) * stride, H)];
      for (let k = 0; k < classes; ++k) if (scores[c * classes + k] >= threshold) out.push({ cls: k, score: scores[c * classes + k], box });
    }
  }
  out.sort((a, b) => b.score - a.score);  // stable in V8
  const kept = [];
  for (const b of out) {
    if (kept.length >= 100) break;
    if (!kept.some((k) => k.cls === b.cls && iou(k.box, b.box) > 0.6)) kept.push(b);
  }
  return kept;
}

runMain('det_pipeline', USAGE, async () => {
  const { opts, positional } = parseArgs(process.argv.slice(2), {
    threads: { type: 'int', default: 1, min: 1 },
    threshold: { type: 'float', default: 0.35 },
    quiet: { type: 'bool', default: false },
  });
  if (opts.help) {
    process.stdout.write(USAGE.trimStart());
    return;
  }
  if (positional.length < 2) throw new UsageError('expected the model and at least one image or directory');
  const model = requireFile(positional[0], 'model');
  const t0 = performance.now();
  const ort = await loadOrt();
  const { cv } = await loadCv();
  const session = await createSession(model, opts.threads);
  const startup = performance.now() - t0;
  const W = 416, H = 416;
  const files = listImages(positional.slice(1));
  const per = [];
  for (const file of files) {
    const t1 = performance.now();
    const img = readImageBGR(file);
    const lb = letterbox(cv, img, W, H);
    const t2 = performance.now();
    const outs = await session.run({ [session.inputNames[0]]: new ort.Tensor('float32', lb.data, [1, 3, H, W]) });
    const t3 = performance.now();
    const levels = [];
    for (const [s, b] of [['Identity', 'Identity_3'], ['Identity_1', 'Identity_4'], ['Identity_2', 'Identity_5']]) {
      const cells = outs[s].dims[1];
      levels.push({ scores: outs[s].data, boxes: outs[b].data, stride: Math.round(Math.sqrt((W * H) / cells)) });
    }
    const boxes = decode(levels, opts.threshold, W, H).map((d) => ({
      cls_id: d.cls,
      score: Math.round(d.score * 1000) / 1000,
      coordinate: [
        Math.min(Math.max((d.box[0] - lb.offX) / lb.scale, 0), img.width), Math.min(Math.max((d.box[1] - lb.offY) / lb.scale, 0), img.height),
        Math.min(Math.max((d.box[2] - lb.offX) / lb.scale, 0), img.width), Math.min(Math.max((d.box[3] - lb.offY) / lb.scale, 0), img.height),
      ].map((v) => Math.round(v * 1000) / 1000),
    }));
    const t4 = performance.now();
    per.push(t4 - t1);
    if (!opts.quiet) {
      process.stdout.write(JSON.stringify({ input_path: file, boxes, timings_ms: { total: t4 - t1, preprocess: t2 - t1, inference: t3 - t2, postprocess: t4 - t3 } }) + '\n');
    }
  }
  const total = per.reduce((a, b) => a + b, 0);
  console.error(`det_pipeline: ${files.length} images, ${(total / files.length).toFixed(2)} ms per image (after ${startup.toFixed(0)} ms start-up), ${opts.threads} thread(s)`);
});
