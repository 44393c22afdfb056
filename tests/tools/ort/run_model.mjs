#!/usr/bin/env node
// Runs an ONNX model in ONNX Runtime (CPU) on tensors read from a safetensors
// file and writes every output to another safetensors file.
import { runMain, parseArgs, requireFile, UsageError, createSession, loadOrt } from './lib/common.mjs';
import { readSafetensors, writeSafetensors, ortTypeToSafetensors } from './lib/safetensors.mjs';

const USAGE = `
usage: node run_model.mjs MODEL.onnx INPUTS.safetensors OUTPUTS.safetensors [--threads N]

  INPUTS.safetensors  one tensor per model input, named like the input
                      (a tensor named "input.<name>" is accepted too)
  OUTPUTS.safetensors every model output, named like the output
  --threads N         ORT intra-op threads (default 1)
`;

runMain('run_model', USAGE, async () => {
  const { opts, positional } = parseArgs(process.argv.slice(2), { threads: { type: 'int', default: 1, min: 1 } });
  if (opts.help) {
    process.stdout.write(USAGE.trimStart());
    return;
  }
  if (positional.length !== 3) throw new UsageError(`expected 3 paths, got ${positional.length}`);
  const [modelPath, inPath, outPath] = positional;
  requireFile(modelPath, 'model');
  requireFile(inPath, 'input file');
  const ort = await loadOrt();
  const session = await createSession(modelPath, opts.threads);
  const { tensors } = readSafetensors(inPath);
  const feeds = {};
  for (const name of session.inputNames) {
    const t = tensors.get(name) ?? tensors.get(`input.${name}`);
    if (!t) {
      throw new Error(
        `${inPath} has no tensor '${name}' for model input '${name}' (it holds: ${[...tensors.keys()].join(', ') || 'nothing'})`,
      );
    }
    feeds[name] = new ort.Tensor(t.ortType, t.data, t.shape);
  }
  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    throw new Error(`ONNX Runtime failed to run ${modelPath}: ${e.message}`);
  }
  const entries = session.outputNames.map((name) => {
    const r = results[name];
    return [name, { dtype: ortTypeToSafetensors(r.type), shape: r.dims.map(Number), data: r.data }];
  });
  writeSafetensors(outPath, entries, { producer: `onnxruntime-node ${ort.env.versions?.common ?? ''}`.trim() });
});
