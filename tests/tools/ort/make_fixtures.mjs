#!/usr/bin/env node
// Regenerates the ONNX Runtime reference fixtures for skiff's C++ tests: one
// safetensors file per PP-OCR model holding the model input ("input.<name>") and
// every ORT output ("output.<name>"), all float32. The inputs are synthetic text
// images drawn with OpenCV's Hershey font (deterministic), or images you pass,
// preprocessed exactly like PaddleOCR.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { runMain, parseArgs, requireFile, UsageError, createSession, loadOrt, loadCv, TOOLS_DIR } from './lib/common.mjs';
import { readImageBGR, writePNGFromBGR, bgrToMat, matToBGR } from './lib/image.mjs';
import { writeSafetensors } from './lib/safetensors.mjs';
import { detNormalize, resizeBGR, resizeNormPad, loadCharacters, ctcDecode, rotate180 } from './lib/ppocr.mjs';

const USAGE = `
usage: node make_fixtures.mjs --det DET.onnx --rec REC.onnx --cls CLS.onnx [options]

Writes det_ppocrv4.safetensors (input 1x3x96x160), rec_ppocrv4.safetensors
(input 2x3x48x160) and cls_ppocr_mobile_v2.safetensors (input 2x3x48x192), and
per model a *_shapes.safetensors file with small cases at other input shapes
("case<i>.input.x", "case<i>.output.<name>") made from the synthetic images.

  --out DIR          output folder (default: tests/data/ort of this checkout)
  --det-image IMG    detector image instead of the synthetic one (resized to 160x96)
  --rec-image IMG    a text-line image for the recognizer batch; give it twice to
                     replace both entries (resized to height 48, width <= 160, padded)
  --cls-image IMG    the same for the classifier batch (height 48, width <= 192)
  --dict FILE        ppocr_keys_v1.txt: print what the recognizer reads
  --save-images DIR  also write the images used as PNGs
  --threads N        ORT intra-op threads (default 1)
`;

const SPEC = {
  det: { type: 'string' },
  rec: { type: 'string' },
  cls: { type: 'string' },
  out: { type: 'string', default: path.resolve(TOOLS_DIR, '../../data/ort') },
  'det-image': { type: 'string' },
  'rec-image': { type: 'list' },
  'cls-image': { type: 'list' },
  dict: { type: 'string' },
  'save-images': { type: 'string' },
  threads: { type: 'int', default: 1, min: 1 },
};

// ---------------------------------------------------------------- drawing ----

// Light background with a gentle, channel-dependent gradient, so that a swapped
// channel order or a wrong mean/std shows up in the model output.
function background(w, h, seed) {
  const data = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = 3 * (y * w + x);
      data[i] = 226 + Math.round((12 * x) / w) + (seed % 2); // B
      data[i + 1] = 232 - Math.round((10 * y) / h) + (seed % 3); // G
      data[i + 2] = 238 - Math.round((8 * (x + y)) / (w + h)); // R
    }
  }
  return { width: w, height: h, data };
}

// Draws `items` ({text, x, y, scale, thick, color: [b, g, r], font}) and bars
// ({bar: [x, y, w, h], color}) with OpenCV, anti-aliased.
function draw(cv, img, items) {
  const m = bgrToMat(cv, img);
  for (const it of items) {
    const color = new cv.Scalar(it.color[0], it.color[1], it.color[2], 255);
    if (it.bar) {
      const [x, y, w, h] = it.bar;
      cv.rectangle(m, new cv.Point(x, y), new cv.Point(x + w - 1, y + h - 1), color, -1, cv.LINE_8);
    } else {
      cv.putText(m, it.text, new cv.Point(it.x, it.y), it.font ?? cv.FONT_HERSHEY_SIMPLEX, it.scale, color, it.thick, cv.LINE_AA);
    }
  }
  const out = matToBGR(m);
  m.delete();
  return out;
}

function detImage(cv) {
  return draw(cv, background(160, 96, 1), [
    { text: 'Skiff 42', x: 8, y: 34, scale: 0.9, thick: 2, color: [96, 40, 18] },
    { text: 'ONNX run', x: 10, y: 74, scale: 0.75, thick: 2, color: [28, 28, 30] },
    { bar: [112, 84, 40, 4], color: [60, 60, 60] },
  ]);
}

function recImages(cv) {
  const a = draw(cv, background(160, 48, 2), [
    { text: 'Hello 2024', x: 4, y: 33, scale: 0.85, thick: 2, color: [20, 20, 24] },
  ]);
  // a shorter crop: it is padded with zeros like resize_norm_img pads a batch
  const b = draw(cv, background(112, 48, 3), [
    { text: 'OCR ok', x: 3, y: 33, scale: 0.8, thick: 2, color: [40, 24, 110] },
  ]);
  return [a, b];
}

function clsImages(cv) {
  const up = draw(cv, background(192, 48, 4), [
    { text: 'paddle text', x: 4, y: 32, scale: 0.8, thick: 2, color: [24, 24, 24] },
  ]);
  const down = rotate180(
    draw(cv, background(192, 48, 5), [{ text: 'upside down', x: 4, y: 32, scale: 0.8, thick: 2, color: [30, 20, 60] }]),
  );
  return [up, down];
}

// -------------------------------------------------------------------- main ----

function sha256(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

async function runAndSave(ort, modelPath, threads, input, shape, outFile, extraMeta) {
  const session = await createSession(modelPath, threads);
  if (session.inputNames.length !== 1) throw new Error(`${modelPath}: expected one input, found ${session.inputNames}`);
  const inName = session.inputNames[0];
  const results = await session.run({ [inName]: new ort.Tensor('float32', input, shape) });
  const entries = [[`input.${inName}`, { dtype: 'F32', shape, data: input }]];
  for (const name of session.outputNames) {
    const r = results[name];
    if (r.type !== 'float32') throw new Error(`${modelPath}: output ${name} is ${r.type}, expected float32`);
    entries.push([`output.${name}`, { dtype: 'F32', shape: r.dims.map(Number), data: r.data }]);
  }
  writeSafetensors(outFile, entries, {
    model: path.basename(modelPath),
    model_sha256: sha256(modelPath),
    runtime: `onnxruntime-node ${ort.env.versions?.common ?? '?'} CPU, graph optimization all, ${threads} thread(s)`,
    generator: 'tests/tools/ort/make_fixtures.mjs',
    ...extraMeta,
  });
  const size = fs.statSync(outFile).size;
  console.log(`${path.relative(process.cwd(), outFile) || outFile}: ${size} bytes; ${entries.map(([k, t]) => `${k} [${t.shape.join('x')}]`).join(', ')}`);
  return { results, session };
}

// More input shapes per model (dynamic batch, height and width), kept small: the
// recognizer's 6625-class output dominates the size. Each case is built from the
// synthetic images, so these files do not depend on --*-image.
async function runShapeCases(ort, modelPath, threads, cases, outFile, extraMeta) {
  const session = await createSession(modelPath, threads);
  if (session.inputNames.length !== 1) throw new Error(`${modelPath}: expected one input, found ${session.inputNames}`);
  const inName = session.inputNames[0];
  const entries = [];
  for (const [i, { shape, data }] of cases.entries()) {
    const results = await session.run({ [inName]: new ort.Tensor('float32', data, shape) });
    entries.push([`case${i}.input.${inName}`, { dtype: 'F32', shape, data }]);
    for (const name of session.outputNames) {
      const r = results[name];
      if (r.type !== 'float32') throw new Error(`${modelPath}: output ${name} is ${r.type}, expected float32`);
      entries.push([`case${i}.output.${name}`, { dtype: 'F32', shape: r.dims.map(Number), data: r.data }]);
    }
  }
  writeSafetensors(outFile, entries, {
    model: path.basename(modelPath),
    model_sha256: sha256(modelPath),
    runtime: `onnxruntime-node ${ort.env.versions?.common ?? '?'} CPU, graph optimization all, ${threads} thread(s)`,
    generator: 'tests/tools/ort/make_fixtures.mjs',
    cases: cases.map((c) => c.shape.join('x')).join(', '),
    ...extraMeta,
  });
  const size = fs.statSync(outFile).size;
  console.log(`${path.relative(process.cwd(), outFile) || outFile}: ${size} bytes; ${cases.length} cases: ${cases.map((c) => c.shape.join('x')).join(', ')}`);
}

// Batch of images through resizeNormPad (recognizer/classifier preprocessing) at height 48, width w.
function recBatch(cv, images, w) {
  const data = new Float32Array(images.length * 3 * 48 * w);
  images.forEach((img, i) => resizeNormPad(cv, img, 48, w, data, i * 3 * 48 * w));
  return { shape: [images.length, 3, 48, w], data };
}

// Batch of images resized to w x h (bilinear) with the detector's normalization.
function detBatch(cv, images, w, h) {
  const data = new Float32Array(images.length * 3 * h * w);
  images.forEach((img, i) => detNormalize(resizeBGR(cv, img, w, h), data, i * 3 * h * w));
  return { shape: [images.length, 3, h, w], data };
}

async function writeShapeFixtures(ort, cv, opts) {
  const det = detImage(cv);
  const [recA, recB] = recImages(cv);
  const [up, down] = clsImages(cv);
  await runShapeCases(ort, opts.det, opts.threads, [detBatch(cv, [det], 96, 64), detBatch(cv, [recA, det], 128, 32)],
    path.join(opts.out, 'det_ppocrv4_shapes.safetensors'), { preprocess: 'synthetic images resized to each shape, detector normalization' });
  await runShapeCases(ort, opts.rec, opts.threads, [recBatch(cv, [recA], 64), recBatch(cv, [recB, recA], 32)],
    path.join(opts.out, 'rec_ppocrv4_shapes.safetensors'), { preprocess: 'synthetic lines, resize_norm_img to each width' });
  await runShapeCases(ort, opts.cls, opts.threads, [recBatch(cv, [down], 96), recBatch(cv, [up, down, recA], 64)],
    path.join(opts.out, 'cls_ppocr_mobile_v2_shapes.safetensors'), { preprocess: 'synthetic lines, resize_norm_img to each width' });
}

runMain('make_fixtures', USAGE, async () => {
  const { opts, positional } = parseArgs(process.argv.slice(2), SPEC);
  if (opts.help) {
    process.stdout.write(USAGE.trimStart());
    return;
  }
  if (positional.length) throw new UsageError(`unexpected argument '${positional[0]}'`);
  for (const k of ['det', 'rec', 'cls']) requireFile(opts[k], `--${k} model`);
  if (opts['rec-image'].length > 2) throw new UsageError('--rec-image is given at most twice');
  if (opts['cls-image'].length > 2) throw new UsageError('--cls-image is given at most twice');
  if (opts['det-image']) requireFile(opts['det-image'], '--det-image');
  for (const p of [...opts['rec-image'], ...opts['cls-image']]) requireFile(p, 'image');
  if (opts.dict) requireFile(opts.dict, '--dict');
  fs.mkdirSync(opts.out, { recursive: true });
  if (opts['save-images']) fs.mkdirSync(opts['save-images'], { recursive: true });
  const ort = await loadOrt();
  const { cv } = await loadCv();
  const save = (name, img) => opts['save-images'] && writePNGFromBGR(path.join(opts['save-images'], name), img);

  // Detector: 1x3x96x160.
  let det = detImage(cv);
  let detSrc = 'synthetic (Hershey text)';
  if (opts['det-image']) {
    det = resizeBGR(cv, readImageBGR(opts['det-image']), 160, 96);
    detSrc = path.basename(opts['det-image']);
  }
  save('det.png', det);
  await runAndSave(ort, opts.det, opts.threads, detNormalize(det), [1, 3, 96, 160],
    path.join(opts.out, 'det_ppocrv4.safetensors'), { image: detSrc, preprocess: 'BGR, (x/255 - mean)/std, mean 0.485,0.456,0.406, std 0.229,0.224,0.225' });

  // Recognizer: 2x3x48x160.
  const rec = recImages(cv);
  const recSrc = ['synthetic', 'synthetic'];
  opts['rec-image'].forEach((p, i) => {
    rec[i] = readImageBGR(p);
    recSrc[i] = path.basename(p);
  });
  const recIn = new Float32Array(2 * 3 * 48 * 160);
  rec.forEach((img, i) => {
    save(`rec_${i}.png`, img);
    resizeNormPad(cv, img, 48, 160, recIn, i * 3 * 48 * 160);
  });
  const { results: recOut, session: recSession } = await runAndSave(ort, opts.rec, opts.threads, recIn, [2, 3, 48, 160],
    path.join(opts.out, 'rec_ppocrv4.safetensors'), { image: recSrc.join(', '), preprocess: 'BGR, resize to height 48 keeping aspect, (x/255-0.5)/0.5, zero pad to width 160' });
  if (opts.dict) {
    const chars = loadCharacters(opts.dict);
    const r = recOut[recSession.outputNames[0]];
    const [n, T, C] = r.dims.map(Number);
    for (let i = 0; i < n; i++) {
      const { text, score } = ctcDecode(r.data, T, C, chars, i * T * C);
      console.log(`  rec[${i}] reads ${JSON.stringify(text)} (score ${score.toFixed(4)})`);
    }
  }

  // Classifier: 2x3x48x192.
  const cls = clsImages(cv);
  const clsSrc = ['synthetic upright', 'synthetic rotated 180'];
  opts['cls-image'].forEach((p, i) => {
    cls[i] = readImageBGR(p);
    clsSrc[i] = path.basename(p);
  });
  const clsIn = new Float32Array(2 * 3 * 48 * 192);
  cls.forEach((img, i) => {
    save(`cls_${i}.png`, img);
    resizeNormPad(cv, img, 48, 192, clsIn, i * 3 * 48 * 192);
  });
  const { results: clsOut, session: clsSession } = await runAndSave(ort, opts.cls, opts.threads, clsIn, [2, 3, 48, 192],
    path.join(opts.out, 'cls_ppocr_mobile_v2.safetensors'), { image: clsSrc.join(', '), preprocess: 'BGR, resize to height 48 keeping aspect, (x/255-0.5)/0.5, zero pad to width 192' });
  const p = clsOut[clsSession.outputNames[0]].data;
  for (let i = 0; i < 2; i++) console.log(`  cls[${i}] p(0)=${p[2 * i].toFixed(4)} p(180)=${p[2 * i + 1].toFixed(4)}`);

  await writeShapeFixtures(ort, cv, opts);
});
