#!/usr/bin/env node
// Runs a TF.js graph model (model.json + weight shards) on TensorFlow.js's own
// CPU backend (pure JavaScript) on tensors read from a safetensors file, and
// writes every output of the model's signature to another safetensors file.
// The reference for skiff's TF.js importer (tests/tools/tfjs/README.md).
import fs from 'node:fs';
import path from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { loadGraphModel } from '@tensorflow/tfjs-converter';
import { runMain, parseArgs, requireFile, UsageError } from '../ort/lib/common.mjs';
import { readSafetensors, writeSafetensors } from '../ort/lib/safetensors.mjs';

const USAGE = `
usage: node run_model.mjs MODEL.json INPUTS.safetensors OUTPUTS.safetensors

  INPUTS.safetensors  one float32 tensor per model input, named like the input
                      without its ":0" ("input_1")
  OUTPUTS.safetensors every signature output, named without ":0", sorted by name
`;

/// An IOHandler reading model.json and its shards from disk (tfjs-node is not needed).
function fileHandler(modelPath) {
  return {
    load: async () => {
      const model = JSON.parse(fs.readFileSync(modelPath, 'utf8'));
      const dir = path.dirname(modelPath);
      const weightSpecs = [];
      const buffers = [];
      for (const group of model.weightsManifest ?? []) {
        weightSpecs.push(...group.weights);
        for (const p of group.paths) buffers.push(fs.readFileSync(path.join(dir, p)));
      }
      const all = Buffer.concat(buffers);
      return {
        modelTopology: model.modelTopology,
        format: model.format,
        generatedBy: model.generatedBy,
        convertedBy: model.convertedBy,
        signature: model.signature,
        userDefinedMetadata: model.userDefinedMetadata,
        weightSpecs,
        weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength),
      };
    },
  };
}

runMain('run_model', USAGE, async () => {
  const { opts, positional } = parseArgs(process.argv.slice(2), {});
  if (opts.help) {
    process.stdout.write(USAGE.trimStart());
    return;
  }
  if (positional.length !== 3) throw new UsageError(`expected 3 paths, got ${positional.length}`);
  const [modelPath, inPath, outPath] = positional;
  requireFile(modelPath, 'model');
  requireFile(inPath, 'input file');
  await tf.setBackend('cpu');
  const model = await loadGraphModel(fileHandler(modelPath));
  const { tensors } = readSafetensors(inPath);
  const feeds = {};
  for (const input of model.inputs) {
    const name = input.name.replace(/:0$/, '');
    const t = tensors.get(name);
    if (!t) throw new Error(`${inPath} has no tensor '${name}' for model input '${input.name}'`);
    feeds[input.name] = tf.tensor(t.data, t.shape, 'float32');
  }
  const names = model.outputs.map((o) => o.name).sort((a, b) => a.replace(/:0$/, '').localeCompare(b.replace(/:0$/, '')));
  const results = model.execute(feeds, names);
  const list = Array.isArray(results) ? results : [results];
  const entries = names.map((name, i) => [
    name.replace(/:0$/, ''),
    { dtype: 'F32', shape: list[i].shape, data: list[i].dataSync() },
  ]);
  writeSafetensors(outPath, entries, { producer: `tfjs-backend-cpu ${tf.version_core}` });
});
