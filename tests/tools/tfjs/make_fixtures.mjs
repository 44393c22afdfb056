#!/usr/bin/env node
// Regenerates tests/data/tfjs/*.safetensors: the outputs of TF.js's CPU backend
// for a fixed input, which skiff's TF.js importer must reproduce (within 1e-4).
// The input is not stored: both sides compute it with fixed_input() below
// (integer hashing, exactly representable floats in [-2, 2)).
//   node make_fixtures.mjs NANODET_MODEL.json [OUT_DIR]
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runMain, parseArgs, requireFile, UsageError } from '../ort/lib/common.mjs';
import { writeSafetensors } from '../ort/lib/safetensors.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const USAGE = `
usage: node make_fixtures.mjs NANODET_MODEL.json [OUT_DIR]
  OUT_DIR defaults to tests/data/tfjs beside this checkout's tests/tools
`;

/// Element i of the fixed input: the same formula as tests/framework/graph/tfjs_parity_test.cpp.
export function fixedInput(count) {
  const out = new Float32Array(count);
  for (let i = 0; i < count; ++i) {
    let h = (i * 2654435761) >>> 0;  // Knuth's multiplicative hash, then xorshift
    h ^= h >>> 13;
    h = Math.imul(h, 0x5bd1e995) >>> 0;
    h ^= h >>> 15;
    out[i] = ((h & 0xffffff) / 16777216) * 4 - 2;
  }
  return out;
}

runMain('make_fixtures', USAGE, async () => {
  const { opts, positional } = parseArgs(process.argv.slice(2), {});
  if (opts.help || positional.length < 1) {
    if (!opts.help) throw new UsageError('expected the NanoDet model.json');
    process.stdout.write(USAGE.trimStart());
    return;
  }
  const model = positional[0];
  requireFile(model, 'model');
  const outDir = positional[1] ?? path.resolve(HERE, '../../data/tfjs');
  fs.mkdirSync(outDir, { recursive: true });
  const shape = [1, 3, 416, 416];
  const input = path.join(outDir, '.nanodet_input.safetensors');
  writeSafetensors(input, [['input_1', { dtype: 'F32', shape, data: fixedInput(shape.reduce((a, b) => a * b)) }]]);
  const out = path.join(outDir, 'nanodet_outputs.safetensors');
  execFileSync(process.execPath, [path.join(HERE, 'run_model.mjs'), model, input, out], { stdio: 'inherit' });
  fs.unlinkSync(input);
  console.log(`wrote ${out}`);
});
