// Greedy continuation of a prompt by llama.cpp itself (the prebuilt CPU library that
// node-llama-cpp ships), for checking skiff's GGUF export against `skiff nlp generate`.
//   node generate.mjs MODEL.gguf "hello world" 8        -> the new token ids, one line
// The prompt gets the model's BOS token first when the GGUF says add_bos_token (as skiff
// does for tokenizer.json post-processors that add one).
import {getLlama} from "node-llama-cpp";

const [modelPath, prompt, n = "8"] = process.argv.slice(2);
if (!modelPath || prompt === undefined) {
  console.error("usage: node generate.mjs MODEL.gguf PROMPT [MAX_NEW_TOKENS]");
  process.exit(2);
}
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: 64, batchSize: 64});
const sequence = context.getSequence();
const ids = [];
if (model.fileInfo.metadata.tokenizer?.ggml?.add_bos_token && model.tokens.bos != null) ids.push(model.tokens.bos);
ids.push(...model.tokenize(prompt));
const out = [];
for await (const token of sequence.evaluate(ids, {temperature: 0})) {
  if (model.isEogToken(token)) break;
  out.push(token);
  if (out.length >= Number(n)) break;
}
console.log(out.join(" "));
await context.dispose();
await model.dispose();
await llama.dispose();
