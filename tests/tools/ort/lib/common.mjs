// Shared helpers for the ORT reference tools: argument parsing, clean failures,
// loading onnxruntime-node and opencv-js, and ORT session creation.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const TOOLS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export class UsageError extends Error {}

// Prints "<prog>: error: <msg>" (plus usage for UsageError) and exits non-zero.
export function runMain(prog, usage, main) {
  main().catch((e) => {
    if (e instanceof UsageError) {
      process.stderr.write(`${prog}: error: ${e.message}\n\n${usage.trim()}\n`);
      process.exit(2);
    }
    process.stderr.write(`${prog}: error: ${e && e.message ? e.message : e}\n`);
    if (process.env.SKIFF_ORT_DEBUG && e && e.stack) process.stderr.write(`${e.stack}\n`);
    process.exit(1);
  });
}

// Parses argv against `spec`: {name: {type: 'string'|'int'|'bool'|'list', default}}.
// Options are written --name VALUE or --name=VALUE; a bool takes no value unless
// given as --name=true|false or --name true|false. Returns {opts, positional}.
export function parseArgs(argv, spec) {
  const opts = {};
  for (const [k, s] of Object.entries(spec)) opts[k] = s.type === 'list' ? [] : s.default;
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h' || a === '--help') {
      opts.help = true;
      continue;
    }
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    let name = a.slice(2);
    let value;
    const eq = name.indexOf('=');
    if (eq >= 0) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
    }
    const s = spec[name];
    if (!s) throw new UsageError(`unknown option --${name}`);
    if (s.type === 'bool') {
      if (value === undefined && (argv[i + 1] === 'true' || argv[i + 1] === 'false')) value = argv[++i];
      if (value === undefined) value = 'true';
      if (value !== 'true' && value !== 'false') throw new UsageError(`--${name} takes true or false, not '${value}'`);
      opts[name] = value === 'true';
      continue;
    }
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new UsageError(`--${name} needs a value`);
      value = argv[++i];
    }
    if (s.type === 'int') {
      if (!/^\d+$/.test(value)) throw new UsageError(`--${name} takes a non-negative integer, not '${value}'`);
      const v = Number(value);
      if (s.min !== undefined && v < s.min) throw new UsageError(`--${name} must be >= ${s.min}`);
      opts[name] = v;
    } else if (s.type === 'list') {
      opts[name].push(value);
    } else {
      opts[name] = value;
    }
  }
  return { opts, positional };
}

export function requireFile(p, what) {
  if (!p) throw new UsageError(`missing ${what}`);
  let st;
  try {
    st = fs.statSync(p);
  } catch {
    throw new Error(`${what} '${p}' does not exist`);
  }
  if (!st.isFile()) throw new Error(`${what} '${p}' is not a file`);
  return p;
}

function missingDeps(e) {
  return new Error(
    `${e.message}\nThe Node dependencies are not installed; run: (cd ${TOOLS_DIR} && npm ci)`,
  );
}

let ortModule;
export async function loadOrt() {
  if (!ortModule) {
    try {
      ortModule = (await import('onnxruntime-node')).default;
    } catch (e) {
      throw missingDeps(e);
    }
  }
  return ortModule;
}

// ORT CPU session: all graph optimizations, `threads` intra-op threads, one
// inter-op thread and sequential execution (the configuration skiff is compared
// against).
export async function createSession(modelPath, threads) {
  const ort = await loadOrt();
  const options = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
  };
  try {
    return await ort.InferenceSession.create(modelPath, options);
  } catch (e) {
    throw new Error(`ONNX Runtime cannot load '${modelPath}': ${e.message}`);
  }
}

let cvModule;
// opencv-js compiled to WebAssembly; resolves to {cv} once its runtime is initialized.
export async function loadCv() {
  if (cvModule) return cvModule;
  let cv;
  try {
    const { createRequire } = await import('node:module');
    cv = createRequire(import.meta.url)('@techstark/opencv-js');
  } catch (e) {
    throw missingDeps(e);
  }
  if (!cv.Mat) {
    await new Promise((resolve) => {
      cv.onRuntimeInitialized = resolve;
    });
  }
  // The Emscripten module object is a thenable: an async function returning it
  // would try to resolve it again. Hand it out inside a wrapper instead.
  cvModule = { cv };
  return cvModule;
}

// Python's round() (half to even) for values that are already float-rounded.
export function roundHalfEven(x) {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

export function parseShape(text, what) {
  if (!/^\d+(x\d+)*$/.test(text)) throw new UsageError(`${what}: '${text}' is not a shape like 1x3x48x320`);
  const shape = text.split('x').map(Number);
  if (shape.some((d) => d <= 0)) throw new UsageError(`${what}: dimensions must be positive`);
  return shape;
}
