#!/usr/bin/env node
// Latency of one ONNX model in ONNX Runtime (CPU EP) on seeded random float32
// inputs: the peer side of bench/compare_models.sh. Uses the Node packages
// installed in tests/tools/ort (run `npm ci` there, or bench/ort/setup_ort.sh).
import path from 'node:path';
import { runMain, parseArgs, requireFile, UsageError, createSession, loadOrt, parseShape } from '../../tests/tools/ort/lib/common.mjs';

const USAGE = `
usage: node bench_model.mjs MODEL.onnx --input NAME:DxDxD [--input ...] --threads N
                            [--warmup 3] [--iters 20] [--seed 1] [--json]

  --input NAME:SHAPE  shape of a model input, e.g. x:1x3x960x960 (every input whose
                      shape is not fixed by the model must be given)
  --threads N         ORT intra-op threads (inter-op threads 1, sequential execution)
  --json              print one JSON object:
                      {"model","inputs","threads","median_ms","p90_ms","peak_rss_mb",...}
`;

// mulberry32: small deterministic generator, uniform in [0, 1).
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function percentile(sorted, q) {
  // nearest-rank percentile
  const k = Math.max(0, Math.ceil(q * sorted.length) - 1);
  return sorted[Math.min(k, sorted.length - 1)];
}

function median(sorted) {
  const n = sorted.length;
  return n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

runMain('bench_model', USAGE, async () => {
  const { opts, positional } = parseArgs(process.argv.slice(2), {
    input: { type: 'list' },
    threads: { type: 'int', min: 1 },
    warmup: { type: 'int', default: 3, min: 0 },
    iters: { type: 'int', default: 20, min: 1 },
    seed: { type: 'int', default: 1 },
    json: { type: 'bool', default: false },
  });
  if (opts.help) {
    process.stdout.write(USAGE.trimStart());
    return;
  }
  if (positional.length !== 1) throw new UsageError(`expected one model path, got ${positional.length}`);
  if (opts.threads === undefined) throw new UsageError('--threads N is required');
  const modelPath = requireFile(positional[0], 'model');
  const shapes = new Map();
  for (const spec of opts.input) {
    const colon = spec.lastIndexOf(':');
    if (colon <= 0) throw new UsageError(`--input '${spec}' is not NAME:SHAPE`);
    shapes.set(spec.slice(0, colon), parseShape(spec.slice(colon + 1), `--input ${spec}`));
  }
  const ort = await loadOrt();
  const session = await createSession(modelPath, opts.threads);
  for (const name of shapes.keys()) {
    if (!session.inputNames.includes(name))
      throw new UsageError(`model has no input '${name}' (inputs: ${session.inputNames.join(', ')})`);
  }
  const next = rng(opts.seed);
  const feeds = {};
  const inputs = [];
  session.inputNames.forEach((name, i) => {
    const meta = session.inputMetadata?.[i];
    let shape = shapes.get(name);
    if (!shape) {
      const fixed = meta?.shape;
      if (!fixed || !fixed.every((d) => typeof d === 'number' && d > 0))
        throw new UsageError(`input '${name}' has a dynamic shape [${fixed ?? '?'}]; pass --input ${name}:SHAPE`);
      shape = fixed;
    }
    if (meta && meta.type && meta.type !== 'float32') throw new Error(`input '${name}' is ${meta.type}; only float32 inputs are supported`);
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    for (let k = 0; k < data.length; k++) data[k] = 2 * next() - 1;
    feeds[name] = new ort.Tensor('float32', data, shape);
    inputs.push(`${name}:${shape.join('x')}`);
  });
  const run = async () => {
    try {
      await session.run(feeds);
    } catch (e) {
      throw new Error(`ONNX Runtime failed to run ${modelPath}: ${e.message}`);
    }
  };
  for (let i = 0; i < opts.warmup; i++) await run();
  const times = [];
  for (let i = 0; i < opts.iters; i++) {
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const r3 = (x) => Math.round(x * 1000) / 1000;
  const result = {
    model: path.basename(modelPath),
    inputs,
    threads: opts.threads,
    median_ms: r3(median(times)),
    p90_ms: r3(percentile(times, 0.9)),
    peak_rss_mb: Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10,
    min_ms: r3(times[0]),
    warmup: opts.warmup,
    iters: opts.iters,
    runtime: `onnxruntime-node ${ort.env.versions?.common ?? '?'}`,
  };
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    console.log(
      `${result.model} ${inputs.join(' ')} threads=${opts.threads}: median ${result.median_ms.toFixed(2)} ms, ` +
        `p90 ${result.p90_ms.toFixed(2)} ms, min ${result.min_ms.toFixed(2)} ms (${opts.iters} iters after ${opts.warmup} warm-up), ` +
        `peak RSS ${result.peak_rss_mb} MB`,
    );
  }
});
