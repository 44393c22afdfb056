// Prints the ids of each file with a JavaScript reference tokenizer (references.mjs),
// space-separated, one line per file: the format of `skiff nlp tokenize --ids FILE...`,
// so the two can be compared with diff (bench/compare_tokenizers.sh does, on its corpus).
//   node tests/tools/tokenizers/encode.mjs gpt2|qwen3|llama2|llama2_metaspace|gemma3|bert FILE...
import fs from 'node:fs';
import { reference } from './references.mjs';

const [which, ...files] = process.argv.slice(2);
const { encode } = reference(which);
for (const f of files) process.stdout.write(encode(fs.readFileSync(f, 'utf8')).join(' ') + '\n');
