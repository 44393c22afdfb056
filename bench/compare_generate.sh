#!/usr/bin/env bash
# Greedy generation speed, skiff against a PyTorch eager loop with a KV cache
# (bench/pytorch_generate.py), on one random 78.6M-parameter LLaMA model directory both
# read: prefill tokens/s (the prompt's forward pass) and decode tokens/s (one token per
# step), per thread count. Also says whether both chose the same tokens.
#   bench/compare_generate.sh [threads, default 1,2] [new tokens, default 64]
#   env: BUILD_DIR (build); MODEL_DIR (default /tmp/skiff_bench_llama, made once);
#        TOKENIZER (a SentencePiece .model with 4,000 pieces, default the fortunes
#        recipe's output/nlp/fortunes_sp4000.model: run `skiff train -c
#        configs/nlp/fortunes_lm.yml` first, or point it at another 4,000-piece model)
# The peer runs without this machine's OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE (bench/peer_env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS="${1:-1,2}"
N="${2:-64}"
BUILD_DIR="${BUILD_DIR:-build}"
MODEL_DIR="${MODEL_DIR:-/tmp/skiff_bench_llama}"
TOKENIZER="${TOKENIZER:-output/nlp/fortunes_sp4000.model}"
SKIFF="$BUILD_DIR/bin/skiff"
source bench/skiff_generate_timing.sh
source bench/peer_env.sh
bench/setup_peer.sh >&2
peer_blas_report compare_generate
[ -f "$TOKENIZER" ] || { echo "compare_generate: no tokenizer $TOKENIZER (see the header of this script)" >&2; exit 2; }
if [ ! -f "$MODEL_DIR/model.safetensors" ]; then
  peer "$PEER_PYTHON" bench/pytorch_generate.py make "$MODEL_DIR" --tokenizer "$TOKENIZER"
fi
# A prompt of about 250 tokens: the first fortunes of the file.
PROMPT="$(head -c 1000 /usr/share/games/fortunes/fortunes)"
PROMPT_IDS="1 $("$SKIFF" nlp tokenize --tokenizer "$MODEL_DIR/tokenizer.model" --text "$PROMPT" --ids)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); prompt $(wc -w <<<"$PROMPT_IDS") tokens, $N new" >&2
printf '%-8s %14s %14s %14s %14s %9s %9s %s\n' threads skiff_prefill torch_prefill skiff_decode torch_decode prefill_x decode_x same_ids
for nt in ${THREADS//,/ }; do
  skiff_generate_best "$SKIFF" "$MODEL_DIR" "$PROMPT" "$N" "$nt"  # the best of three, as the peer
  torch=$(peer "$PEER_PYTHON" bench/pytorch_generate.py run "$MODEL_DIR" "$nt" "$N" $PROMPT_IDS)
  python3 - "$nt" "$best_prefill" "$best_decode" "$skiff_ids" "$torch" <<'PY'
import json, sys
nt, sp, sd, ids, torch = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4].split(), json.loads(sys.argv[5])
same = sum(1 for a, b in zip(ids, torch["ids"]) if int(a) == b)
first_diff = next((i for i, (a, b) in enumerate(zip(ids, torch["ids"])) if int(a) != b), None)
print(f"{nt:<8} {sp:14.1f} {torch['prefill_tok_s']:14.1f} {sd:14.1f} {torch['decode_tok_s']:14.1f} "
      f"{sp / torch['prefill_tok_s']:8.2f}x {sd / torch['decode_tok_s']:8.2f}x "
      f"{'all' if first_diff is None else f'first {first_diff}'} of {len(ids)}")
PY
done
