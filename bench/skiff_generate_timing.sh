# Sourced by bench/compare_generate.sh and bench/compare_llamacpp.sh: skiff's side of a
# generation benchmark, as its peers measure theirs.
#   skiff_generate_best SKIFF MODEL_DIR PROMPT N THREADS
# runs `skiff nlp generate --ids` three times and sets best_prefill and best_decode (the
# best tokens/s of the three, from the stderr line) and skiff_ids (the new token ids).
skiff_generate_best() {
  local skiff="$1" model="$2" prompt="$3" n="$4" threads="$5" err p d ids_file
  ids_file="$(mktemp)"
  best_prefill=0 best_decode=0 skiff_ids=""
  for _ in 1 2 3; do
    err=$("$skiff" nlp generate --model "$model" --prompt "$prompt" -n "$n" --ids --threads "$threads" 2>&1 >"$ids_file")
    skiff_ids=$(cat "$ids_file")
    p=$(grep -oP "prefill: \d+ tokens in [0-9.]+ ms \(\K[0-9.]+" <<<"$err")
    d=$(grep -oP "decode: \d+ tokens in [0-9.]+ ms \(\K[0-9.]+" <<<"$err")
    best_prefill=$(python3 -c "print(max($best_prefill, $p))")
    best_decode=$(python3 -c "print(max($best_decode, $d))")
  done
  rm -f "$ids_file"
}
