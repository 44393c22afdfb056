// The llama.cpp peer of `skiff nlp generate`: greedy decoding of a GGUF model by the
// prebuilt CPU library of node-llama-cpp (tests/tools/llamacpp/setup.sh installs it).
//   node bench/llamacpp_generate.mjs MODEL.gguf THREADS N ID...
// Feeds the prompt ids once (prefill), then generates N tokens one per step, and prints
// {"prefill_tok_s", "decode_tok_s", "ids"}, timed as skiff times them: prefill ends when
// the first new token is chosen. The best of three runs, each on a fresh context.
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const {getLlama} = await import(
    pathToFileURL(path.join(root, "tests/tools/llamacpp/node_modules/node-llama-cpp/dist/index.js")).href);

const [modelPath, threadsArg, nArg, ...idArgs] = process.argv.slice(2);
if (!modelPath || !threadsArg || !nArg || idArgs.length === 0) {
  console.error("usage: node bench/llamacpp_generate.mjs MODEL.gguf THREADS N ID...");
  process.exit(2);
}
const threads = Number(threadsArg), n = Number(nArg), ids = idArgs.map(Number);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error", maxThreads: threads});
const model = await llama.loadModel({modelPath});
const contextSize = 64 * Math.ceil((ids.length + n + 1) / 64);
let best = {prefill_tok_s: 0, decode_tok_s: 0, ids: []};
for (let run = 0; run < 3; ++run) {
  const context = await model.createContext({contextSize, batchSize: contextSize, threads: {ideal: threads, min: threads}});
  const sequence = context.getSequence();
  const out = [];
  const t0 = performance.now();
  let tFirst = 0;
  for await (const token of sequence.evaluate(ids, {temperature: 0})) {
    if (out.length === 0) tFirst = performance.now();
    out.push(token);
    if (out.length >= n) break;
  }
  const t1 = performance.now();
  best = {
    prefill_tok_s: Math.max(best.prefill_tok_s, ids.length / ((tFirst - t0) / 1e3)),
    decode_tok_s: Math.max(best.decode_tok_s, (out.length - 1) / ((t1 - tFirst) / 1e3)),
    ids: out,
  };
  await context.dispose();
}
console.log(JSON.stringify(best));
await model.dispose();
await llama.dispose();
