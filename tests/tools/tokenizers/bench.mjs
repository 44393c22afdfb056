// Encoding throughput of the JavaScript reference tokenizers, timed like
// `skiff bench tokenize` (bench/compare_tokenizers.sh runs both): each file is
// encoded as one text, a pass encodes every file; one warm-up pass, then the median
// of at least 5 passes and 1 s. Node runs the encoders on one thread.
//   node tests/tools/tokenizers/bench.mjs NAME [--lines] FILE...   (NAME: see references.mjs)
// --lines: each line (with its newline) is one text instead of each file: the
// references' costs that grow with the length of a text (gpt-3-encoder concatenates
// its output array token by token) then stay small.
// Prints one JSON line: {bench, mode: "warm" or "lines", tokens, bytes, seconds, tokens_per_second}.
import fs from 'node:fs';
import { reference } from './references.mjs';

let [which, ...files] = process.argv.slice(2);
const lines = files[0] === '--lines';
if (lines) files = files.slice(1);
const { encode } = reference(which);
let texts = files.map((f) => fs.readFileSync(f, 'utf8'));
if (lines) texts = texts.flatMap((t) => t.split(/(?<=\n)/));
const bytes = files.reduce((n, f) => n + fs.statSync(f).size, 0);
let tokens = 0;
const pass = () => {
  let n = 0;
  for (const t of texts) n += encode(t).length;
  tokens = n;
};
pass();
const times = [];
const start = performance.now();
while (times.length < 5 || performance.now() - start < 1000) {
  const t0 = performance.now();
  pass();
  times.push((performance.now() - t0) / 1000);
}
times.sort((a, b) => a - b);
const seconds = times[Math.floor(times.length / 2)];
console.log(JSON.stringify({ bench: which, mode: lines ? 'lines' : 'warm', tokens, bytes, seconds, tokens_per_second: tokens / seconds }));
