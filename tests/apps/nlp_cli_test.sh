#!/usr/bin/env bash
# `skiff nlp tokenize` / `skiff nlp decode` as a user runs them, on a small GPT-2-style
# tokenizer this script writes (offline): outputs, --ids, --json, stdin, and the exit
# codes and messages of a bad path, a malformed file and invalid UTF-8; WordPiece from a
# BERT vocab.txt; `skiff nlp train-tokenizer` (SentencePiece, on Debian's fortunes when
# installed) and the trained model against spm_encode; then
# `skiff nlp generate`, `skiff nlp chat` and `skiff nlp export --gguf` on the tiny LLaMA fixture of
# tests/data/llama.
# Usage: nlp_cli_test.sh SKIFF_BINARY
set -u
SKIFF="$(realpath "$1")"
LLAMA_DATA="$(cd "$(dirname "$0")/../data/llama" && pwd)"
source "$(dirname "$0")/check.sh"
cd "$TMP"

# Byte alphabet of GPT-2 (bytes_to_unicode), ids 0..255 in byte order, two merges.
python3 - <<'PY'
import json
bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
cs, n = bs[:], 0
for b in range(256):
    if b not in bs:
        bs.append(b); cs.append(256 + n); n += 1
char = {b: chr(c) for b, c in zip(bs, cs)}
vocab = {char[b]: b for b in range(256)}
vocab.update({"he": 256, "hel": 257, "\u0120w": 258})
json.dump(vocab, open("encoder.json", "w"))
open("vocab.bpe", "w").write("#version: 0.2\nh e\nhe l\n\u0120 w\n")
json.dump({"model": {"type": "BPE", "vocab": vocab, "merges": ["h e", "he l"]},
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False},
           "added_tokens": [{"id": 300, "content": "<|end|>", "special": True}]}, open("tokenizer.json", "w"))
PY
mkdir gpt2 && mv encoder.json vocab.bpe gpt2/

expect() {
  local want="$1" name="$2"; shift 2
  "$@" >"$name.out" 2>"$name.err"
  local rc=$?
  check "$name: exit $want (got $rc)" test "$rc" -eq "$want"
}

expect 0 help "$SKIFF" nlp tokenize --help
check "help: says what it prints" grep -q "one line per token" help.out
expect 0 table "$SKIFF" nlp tokenize --tokenizer gpt2 --text "help we"
check "table: id, range, text" diff <(printf '257\t0:3\thel\n112\t3:4\tp\n258\t4:6\t w\n101\t6:7\te\n') table.out
check "table: count on stderr" grep -q "^4 tokens" table.err
expect 0 ids "$SKIFF" nlp tokenize -t gpt2/encoder.json --ids --text "help we"
check "ids: one line" diff <(echo "257 112 258 101") ids.out
printf 'help\n' > a.txt; printf 'x<|end|>' > b.txt
expect 0 json "$SKIFF" nlp tokenize -t tokenizer.json --json a.txt b.txt
check "json: one object per file" test "$(wc -l < json.out)" -eq 2
check "json: added token" grep -qF '{"count":2,"ids":[120,300],"input":"b.txt","offsets":[[0,1],[1,8]],"tokens":["x","<|end|>"]}' json.out
expect 0 stdin bash -c "printf 'he' | '$SKIFF' nlp tokenize -t gpt2 --ids -"
check "stdin: read" diff <(echo "256") stdin.out
expect 0 decode "$SKIFF" nlp decode -t tokenizer.json 257 112 300
check "decode: text" diff <(echo "help<|end|>") decode.out
expect 0 decode_skip "$SKIFF" nlp decode -t tokenizer.json --skip-special 257 112 300
check "decode_skip: no special" diff <(echo "help") decode_skip.out

# 2: bad input, each naming what is wrong.
expect 2 missing_tokenizer "$SKIFF" nlp tokenize -t no/such/tokenizer.json --text hi
check "missing_tokenizer: names the path" grep -qF "tokenizer 'no/such/tokenizer.json' does not exist" missing_tokenizer.err
expect 2 missing_input "$SKIFF" nlp tokenize -t gpt2 nothing.txt
check "missing_input: names the file" grep -qF "input file 'nothing.txt' does not exist" missing_input.err
printf 'ok \xff' > bad.txt
expect 2 bad_utf8 "$SKIFF" nlp tokenize -t gpt2 bad.txt
check "bad_utf8: names the offset and the file" grep -qF "invalid UTF-8 at byte offset 3 (byte 0xFF)" bad_utf8.err
check "bad_utf8: names the file" grep -qF "while tokenizing bad.txt" bad_utf8.err
mkdir broken && printf '{"model": {"type": "BPE", "vocab": {}}}' > broken/tokenizer.json
expect 2 broken "$SKIFF" nlp tokenize -t broken --text hi
check "broken: names file and key" grep -qF "broken/tokenizer.json: missing key 'model.merges'" broken.err
mkdir badmerge && cp gpt2/encoder.json badmerge/ && printf '#version: 0.2\nh e\nh e l\n' > badmerge/vocab.bpe
expect 2 bad_merge "$SKIFF" nlp tokenize -t badmerge --text hi
check "bad_merge: names file and line" grep -qF "badmerge/vocab.bpe: line 3: expected two tokens" bad_merge.err
expect 2 both "$SKIFF" nlp tokenize -t gpt2 --text hi a.txt
expect 2 nothing "$SKIFF" nlp tokenize -t gpt2
expect 2 no_tokenizer "$SKIFF" nlp tokenize --text hi
expect 2 bad_id "$SKIFF" nlp decode -t gpt2 99999
check "bad_id: names the id" grep -q "99999" bad_id.err
# 3: a tokenizer skiff cannot run.
mkdir unigram && printf '{"model": {"type": "Unigram", "vocab": [["a", -1.0]]}}' > unigram/tokenizer.json
expect 3 unsupported "$SKIFF" nlp tokenize -t unigram --text hi
check "unsupported: says what" grep -qF "unigram/tokenizer.json: model type 'Unigram' is not supported" unsupported.err
printf '{"model": {"type": "WordPiece", "vocab": {"[UNK]": 0}}, "pre_tokenizer": {"type": "Digits"}}' > unigram/tokenizer.json
expect 3 unsupported_pre "$SKIFF" nlp tokenize -t unigram --text hi
check "unsupported_pre: names file, key and type" grep -qF "unigram/tokenizer.json: pre_tokenizer: pre-tokenizer type 'Digits'" unsupported_pre.err

# WordPiece from a BERT vocab.txt (BERT's uncased defaults).
mkdir bert && printf '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n##s\n,\n' > bert/vocab.txt
expect 0 wp_table "$SKIFF" nlp tokenize -t bert --text "[CLS] Hellos, hello"
check "wp_table: ids, ranges, text" diff <(printf '2\t0:5\t[CLS]\n5\t6:11\tHello\n6\t11:12\ts\n7\t12:13\t,\n5\t14:19\thello\n') wp_table.out
check "wp_table: kind on stderr" grep -qF "5 tokens (WordPiece" wp_table.err
expect 0 wp_decode "$SKIFF" nlp decode -t bert/vocab.txt --skip-special 2 5 6 7 5
check "wp_decode: WordPiece decoder" diff <(echo "hellos, hello") wp_decode.out

# SentencePiece: train a model with libsentencepiece, then tokenize and decode with it.
FORTUNES=/usr/share/games/fortunes/fortunes
[ -f "$FORTUNES" ] || { FORTUNES=corpus.txt; for i in $(seq 200); do echo "line $i of a small corpus, with words and numbers $((i * 7))"; done > corpus.txt; }
expect 0 spm_train "$SKIFF" nlp train-tokenizer -o fortunes.model --vocab-size 800 --byte-fallback "$FORTUNES"
check "spm_train: says what it wrote" grep -qF "wrote fortunes.model (800 pieces, unigram)" spm_train.err
check "spm_train: .vocab beside it" test -s fortunes.vocab
head -n 40 "$FORTUNES" | grep -v '^%' | grep -v '^$' > sample.txt
line="$(sed -n 3p sample.txt)"
expect 0 spm_line "$SKIFF" nlp tokenize -t fortunes.model --ids --text "$line"
if command -v spm_encode >/dev/null; then
  check "spm_line: ids equal spm_encode's" diff spm_line.out <(echo "$line" | spm_encode --model=fortunes.model --output_format=id)
fi
expect 0 spm_decode "$SKIFF" nlp decode -t fortunes.model $(cat spm_line.out)
check "spm_decode: round trip" test "$(cat spm_decode.out)" = "$line"
expect 2 spm_bad "$SKIFF" nlp tokenize -t a.txt --text hi
check "spm_bad: a .txt is read as a BERT vocabulary" grep -qF "a.txt: no [UNK] token: not a BERT vocabulary" spm_bad.err
printf 'not a model' > bad.model
expect 5 spm_bad_model "$SKIFF" nlp tokenize -t bad.model --text hi
check "spm_bad_model: names the file" grep -qF "bad.model: not a SentencePiece model" spm_bad_model.err
expect 2 spm_out "$SKIFF" nlp train-tokenizer -o m.bin a.txt
check "spm_out: names the option" grep -qF "must be a .model file" spm_out.err

# `skiff nlp generate` on the tiny LLaMA fixture (tests/data/llama/tiny: random weights,
# byte-level tokenizer.json; tests/tools/llama/make_fixture.py writes it).
MODEL="$LLAMA_DATA/tiny"
expect 0 gen_help "$SKIFF" nlp generate --help
check "gen_help: says what the directory holds" grep -q "model.safetensors.index.json" gen_help.out
check "gen_help: explains decoding" grep -q "greedy by default" gen_help.out
expect 0 gen_ids "$SKIFF" nlp generate --model "$MODEL" --prompt "hello world" --max_new_tokens 8 --ids
check "gen_ids: 8 ids" test "$(wc -w < gen_ids.out)" -eq 8
check "gen_ids: stats on stderr" grep -q "^8 new tokens in .*stopped: length" gen_ids.err
expect 0 gen_stream "$SKIFF" nlp generate --model "$MODEL" --prompt "hello world" --max_new_tokens 8
expect 0 gen_nostream "$SKIFF" nlp generate --model "$MODEL" --prompt "hello world" --max_new_tokens 8 --no-stream
check "gen: streamed text == text printed at the end" cmp gen_stream.out gen_nostream.out
check "gen: output is valid UTF-8" python3 -c "open('gen_stream.out', encoding='utf-8').read()"
expect 0 gen_decode "$SKIFF" nlp decode -t "$MODEL" --skip-special $(cat gen_ids.out)
check "gen: text is the decoded ids" cmp gen_decode.out gen_nostream.out
expect 0 gen_seed_a "$SKIFF" nlp generate -m "$MODEL" -p "the world" --temperature 1.2 --top_k 50 --top_p 0.95 --seed 3 --ids
expect 0 gen_seed_b "$SKIFF" nlp generate -m "$MODEL" -p "the world" --temperature 1.2 --top_k 50 --top_p 0.95 --seed 3 --ids
check "gen: same seed, same sample" cmp gen_seed_a.out gen_seed_b.out
expect 0 gen_seed_c "$SKIFF" nlp generate -m "$MODEL" -p "the world" --temperature 1.2 --top_k 50 --top_p 0.95 --seed 4 --ids
check "gen: another seed, another sample" bash -c "! cmp -s gen_seed_a.out gen_seed_c.out"
expect 0 gen_topk1 "$SKIFF" nlp generate -m "$MODEL" -p "the world" --temperature 0.7 --top_k 1 --seed 9 --ids
expect 0 gen_greedy "$SKIFF" nlp generate -m "$MODEL" -p "the world" --ids
check "gen: top_k 1 sampling == greedy" cmp gen_topk1.out gen_greedy.out
expect 0 gen_batch "$SKIFF" nlp generate -m "$MODEL" -p "the world" -p "hello" --max_new_tokens 8 --ids
expect 0 gen_single "$SKIFF" nlp generate -m "$MODEL" -p "hello" --max_new_tokens 8 --ids
check "gen: a padded batch row == the prompt alone" test "$(sed -n 2p gen_batch.out)" = "$(cat gen_single.out)"
check "gen: batch row 1 == greedy alone" test "$(sed -n 1p gen_batch.out | cut -d' ' -f1-8)" = "$(cut -d' ' -f1-8 gen_greedy.out)"
expect 0 gen_stop "$SKIFF" nlp generate -m "$MODEL" -p "hello world" --stop the
check "gen_stop: stops at the string, keeping it" test "$(cat gen_stop.out)" = " the"
check "gen_stop: says why" grep -q "stopped: stop" gen_stop.err
# 2: bad input, each naming what is wrong.
mkdir notok && cp "$MODEL"/config.json "$MODEL"/model.safetensors notok/
expect 2 gen_no_tokenizer "$SKIFF" nlp generate -m notok -p hi
check "gen_no_tokenizer: names the directory and the files" grep -qF "notok has no tokenizer.json or tokenizer.model" gen_no_tokenizer.err
expect 2 gen_no_model "$SKIFF" nlp generate -m no/such/dir -p hi
check "gen_no_model: names the directory" grep -qF "model directory 'no/such/dir' does not exist" gen_no_model.err
mkdir badcfg && cp "$MODEL"/* badcfg/ && python3 -c "
import json; c = json.load(open('badcfg/config.json')); del c['hidden_size']; json.dump(c, open('badcfg/config.json', 'w'))"
expect 2 gen_bad_config "$SKIFF" nlp generate -m badcfg -p hi
check "gen_bad_config: names file and key" grep -qF "badcfg/config.json: key 'hidden_size': required key is missing" gen_bad_config.err
expect 2 gen_bad_top_p "$SKIFF" nlp generate -m "$MODEL" -p hi --temperature 1 --top_p 1.5
check "gen_bad_top_p: names the option" grep -qF "top_p must be in (0, 1]" gen_bad_top_p.err

# `skiff nlp chat` on the same fixture, whose tokenizer_config.json has a ChatML-like
# template: the prompt as the template renders it, replies equal to `nlp generate` on that
# prompt, turns from --message or stdin, --save / --messages, and errors.
expect 0 chat_help "$SKIFF" nlp chat --help
check "chat_help: explains where turns come from" grep -q "one per line of stdin" chat_help.out
expect 0 chat_prompt "$SKIFF" nlp chat -m "$MODEL" --system "be brief" --message "hello world" --print_prompt
printf '<s>system\nbe brief</s>\n<s>user\nhello world</s>\n<s>assistant\n' > chat_prompt.want
check "chat_prompt: the template's rendering" cmp chat_prompt.out chat_prompt.want
expect 0 chat_one "$SKIFF" nlp chat -m "$MODEL" --message "hello world" -n 8 --save conv.json
expect 0 chat_gen1 "$SKIFF" nlp generate -m "$MODEL" --no_bos -n 8 -p $'<s>user\nhello world</s>\n<s>assistant\n'
check "chat: the reply == generate on the rendered prompt" cmp chat_one.out chat_gen1.out
check "chat: stats on stderr" grep -q "prompt tokens, 8 new in .*stopped: length" chat_one.err
check "chat --save: user and assistant turns" python3 -c "
import json; m = json.load(open('conv.json')); assert [x['role'] for x in m] == ['user', 'assistant'], m
assert m[1]['content'] + '\n' == open('chat_one.out', encoding='utf-8').read(), m"
expect 0 chat_two "$SKIFF" nlp chat -m "$MODEL" --messages conv.json --message "the" -n 6
python3 -c "
import json; m = json.load(open('conv.json'))
print(''.join('<s>%s\n%s</s>\n' % (x['role'], x['content']) for x in m) + '<s>user\nthe</s>\n<s>assistant\n', end='')" > turn2.prompt
turn2="$(cat turn2.prompt; printf x)"  # $(...) alone would drop the prompt's final newline
expect 0 chat_gen2 "$SKIFF" nlp generate -m "$MODEL" --no_bos -n 6 -p "${turn2%x}"
check "chat --messages: continues the saved conversation" cmp chat_two.out chat_gen2.out
printf 'hello world\n\nthe\n' | "$SKIFF" nlp chat -m "$MODEL" -n 6 > chat_stdin.out 2> chat_stdin.err
expect 0 chat_args "$SKIFF" nlp chat -m "$MODEL" --message "hello world" --message "the" -n 6
check "chat: stdin lines == --message turns (empty line skipped)" cmp chat_stdin.out chat_args.out
check "chat: one reply per turn" test "$(grep -c 'prompt tokens' chat_stdin.err)" -eq 2
printf '{%% if shout %%}LOUD {%% endif %%}{{ messages[-1].content }}|' > own.jinja
expect 0 chat_own "$SKIFF" nlp chat -m "$MODEL" --template own.jinja --set shout=true --message hi --print_prompt
check "chat --template/--set: own template and variables" test "$(cat chat_own.out)" = "LOUD hi|"
mkdir notemplate && cp "$MODEL"/config.json "$MODEL"/model.safetensors "$MODEL"/tokenizer.json notemplate/
expect 2 chat_no_template "$SKIFF" nlp chat -m notemplate --message hi
check "chat_no_template: says what to do" grep -qF "notemplate has no chat template" chat_no_template.err
check "chat_no_template: suggests --template" grep -qF -- "--template FILE.jinja" chat_no_template.err
printf '{%% for m in messages %%}{{ m.content|nosuch }}{%% endfor %%}' > bad.jinja
expect 2 chat_bad_template "$SKIFF" nlp chat -m "$MODEL" --template bad.jinja --message hi --print_prompt
check "chat_bad_template: names the file, line and filter" grep -qF "template bad.jinja line 1: no filter named 'nosuch'" chat_bad_template.err
printf '{"role": "user"}' > notalist.json
expect 2 chat_bad_messages "$SKIFF" nlp chat -m "$MODEL" --messages notalist.json --message hi
check "chat_bad_messages: names the file" grep -qF "notalist.json must be a JSON array" chat_bad_messages.err

# A model directory listed in your own zoo index (file:// sources) runs by its name:
# pulled into the cache on first use, then the same tokens as from the directory.
mkdir -p my_zoo
python3 - "$MODEL" > my_zoo/index.yaml <<'PY'
import hashlib, os, sys
d = sys.argv[1]
print("version: 1\nmodels:\n  - name: my-tiny\n    suite: nlp\n    task: text-generation\n"
      "    architecture: LLaMA-style decoder (random weights)\n"
      "    description:\n      en: The tiny test fixture.\n      zh: 测试用的小模型。\n"
      "    license: Apache-2.0\n    languages: [en]\n    metrics: []\n    version: \"1\"\n    files:")
for f in sorted(os.listdir(d)):
    data = open(os.path.join(d, f), "rb").read()
    print(f"      - path: {f}\n        sha256: {hashlib.sha256(data).hexdigest()}\n        size: {len(data)}\n"
          f"        sources:\n          - file://{os.path.join(d, f)}")
PY
export SKIFF_HOME="$TMP/home"
SKIFF_ZOO_INDEX=my_zoo/index.yaml expect 0 zoo_gen "$SKIFF" nlp generate --model my-tiny --prompt "hello world" --max_new_tokens 8 --ids
check "zoo name: the directory's tokens" cmp zoo_gen.out gen_ids.out
check "zoo name: pulled into the cache" test -s "$SKIFF_HOME/models/my-tiny/tokenizer_config.json"
SKIFF_ZOO_INDEX=my_zoo/index.yaml expect 0 zoo_chat "$SKIFF" nlp chat --model my-tiny --message "hello world" --print_prompt
check "zoo name: chat finds the template" grep -q "^<s>user" zoo_chat.out
SKIFF_ZOO_INDEX=my_zoo/index.yaml expect 2 zoo_typo "$SKIFF" nlp generate --model my-tinny --prompt hi
check "zoo_typo: suggests the name" grep -qF "(did you mean 'my-tiny'?)" zoo_typo.err
unset SKIFF_HOME

# `skiff nlp export --gguf`: a GGUF v3 file (F32 / F16) and errors naming the input.
expect 0 exp_help "$SKIFF" nlp export --help
check "exp_help: explains the permutation" grep -q "rotate_half" exp_help.out
expect 0 exp_f32 "$SKIFF" nlp export -m "$MODEL" --gguf tiny.gguf
check "exp_f32: summary" grep -qF "wrote tiny.gguf: 21 tensors (F32), 23 metadata keys" exp_f32.out
check "exp_f32: GGUF magic and version 3" test "$(head -c 8 tiny.gguf | od -An -tx1 | tr -d ' \n')" = "4747554603000000"
expect 0 exp_f16 "$SKIFF" nlp export -m "$MODEL" --gguf tiny16.gguf --dtype f16
check "exp_f16: smaller than F32" test "$(stat -c %s tiny16.gguf)" -lt "$(stat -c %s tiny.gguf)"
expect 2 exp_bad_dtype "$SKIFF" nlp export -m "$MODEL" --gguf x.gguf --dtype q4_0
check "exp_bad_dtype: names the dtype" grep -qF "unknown dtype 'q4_0'" exp_bad_dtype.err
expect 2 exp_no_model "$SKIFF" nlp export -m no/such/dir --gguf x.gguf
check "exp_no_model: names the directory" grep -qF "model directory 'no/such/dir' does not exist" exp_no_model.err
expect 5 exp_unwritable "$SKIFF" nlp export -m "$MODEL" --gguf no/such/dir/x.gguf
check "exp_unwritable: names the path" grep -qF "cannot write 'no/such/dir/x.gguf'" exp_unwritable.err
expect 5 exp_no_tokenizer "$SKIFF" nlp export -m notok --gguf x.gguf
check "exp_no_tokenizer: names the file" grep -qF "notok/tokenizer.json is missing" exp_no_tokenizer.err
check "export: no file left by the failures" test ! -e x.gguf

[ "$fails" -eq 0 ] && echo "all passed" || { echo "$fails failed"; exit 1; }
