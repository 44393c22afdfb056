#!/usr/bin/env bash
# Greedy generation speed, skiff against llama.cpp (the prebuilt CPU library of the npm
# package node-llama-cpp, bench/llamacpp_generate.mjs) on the same F32 model: the random
# 78.6M-parameter LLaMA directory of bench/compare_generate.sh, read by skiff as it is and
# by llama.cpp as the GGUF F32 file `skiff nlp export` writes from it. Prefill tokens/s
# (the prompt's forward pass) and decode tokens/s (one token per step), per thread count,
# on the same prompt ids; also says whether both chose the same tokens.
#   bench/compare_llamacpp.sh [threads, default 1,2] [new tokens, default 64]
#   env: BUILD_DIR (build); MODEL_DIR (default /tmp/skiff_bench_llama, made once by
#        bench/pytorch_generate.py); TOKENIZER (as for bench/compare_generate.sh)
# The GGUF needs a tokenizer.json (the export writes byte-level BPE vocabularies): the
# tiny fixture's is borrowed, padded to the model's 4,000 ids. Only ids cross over, so the
# tokenizer plays no part in the timings.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS="${1:-1,2}"
N="${2:-64}"
BUILD_DIR="${BUILD_DIR:-build}"
MODEL_DIR="${MODEL_DIR:-/tmp/skiff_bench_llama}"
TOKENIZER="${TOKENIZER:-output/nlp/fortunes_sp4000.model}"
SKIFF="$BUILD_DIR/bin/skiff"
source bench/skiff_generate_timing.sh
tests/tools/llamacpp/setup.sh >&2
if [ ! -f "$MODEL_DIR/model.safetensors" ]; then
  [ -f "$TOKENIZER" ] || { echo "compare_llamacpp: no tokenizer $TOKENIZER (see bench/compare_generate.sh)" >&2; exit 2; }
  source bench/peer_env.sh
  bench/setup_peer.sh >&2
  peer "$PEER_PYTHON" bench/pytorch_generate.py make "$MODEL_DIR" --tokenizer "$TOKENIZER"
fi
GGUF_DIR="$MODEL_DIR.gguf_export"
GGUF="$MODEL_DIR.f32.gguf"
if [ ! -f "$GGUF" ]; then
  mkdir -p "$GGUF_DIR"
  ln -sf "$(realpath "$MODEL_DIR/config.json")" "$(realpath "$MODEL_DIR/model.safetensors")" "$GGUF_DIR/"
  cp tests/data/llama/tiny/tokenizer.json "$GGUF_DIR/"
  "$SKIFF" nlp export --model "$GGUF_DIR" --gguf "$GGUF" >&2
fi
PROMPT="$(head -c 1000 /usr/share/games/fortunes/fortunes)"
PROMPT_IDS="1 $("$SKIFF" nlp tokenize --tokenizer "$MODEL_DIR/tokenizer.model" --text "$PROMPT" --ids)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); prompt $(wc -w <<<"$PROMPT_IDS") tokens, $N new" >&2
printf '%-8s %14s %14s %14s %14s %9s %9s %s\n' threads skiff_prefill llama_prefill skiff_decode llama_decode prefill_x decode_x same_ids
for nt in ${THREADS//,/ }; do
  skiff_generate_best "$SKIFF" "$MODEL_DIR" "$PROMPT" "$N" "$nt"  # the best of three, as the peer
  peer=$(node bench/llamacpp_generate.mjs "$GGUF" "$nt" "$N" $PROMPT_IDS)
  python3 - "$nt" "$best_prefill" "$best_decode" "$skiff_ids" "$peer" <<'PY'
import json, sys
nt, sp, sd, ids, peer = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4].split(), json.loads(sys.argv[5])
first_diff = next((i for i, (a, b) in enumerate(zip(ids, peer["ids"])) if int(a) != b), None)
print(f"{nt:<8} {sp:14.1f} {peer['prefill_tok_s']:14.1f} {sd:14.1f} {peer['decode_tok_s']:14.1f} "
      f"{sp / peer['prefill_tok_s']:8.2f}x {sd / peer['decode_tok_s']:8.2f}x "
      f"{'all' if first_diff is None else f'first {first_diff}'} of {len(ids)}")
PY
done
