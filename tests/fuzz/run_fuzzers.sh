#!/usr/bin/env bash
# Runs skiff's libFuzzer harnesses on a budget and reports, per harness, the executions,
# the speed, the coverage reached (edges) and whether anything was found.
#
#   tests/fuzz/run_fuzzers.sh [--build DIR] [--time SECONDS | --runs N] [--only a,b] [--work DIR]
#
#   --build DIR   the fuzzing build (cmake --preset fuzz; default: build-fuzz)
#   --time S      stop each harness after S seconds (default 60)
#   --runs N      stop each harness after N executions instead (e.g. 1000000)
#   --only LIST   comma-separated harness names (default: every fuzz_* in DIR/bin)
#   --work DIR    where corpora, crash artifacts and logs go (default: DIR/fuzz_work);
#                 a corpus grows across runs, so later runs start where earlier ones stopped
#   --jobs J      harnesses run J at a time (default 1)
#   --seed S      libFuzzer's random seed: with --runs, the same inputs every time (CI's smoke)
#
# A finding (crash, sanitizer report, leak, timeout, out-of-memory) leaves its input in
# WORK/artifacts/<harness>/ and makes the script exit 1: add the input to
# tests/fuzz/regressions/<harness>/ with the fix, and the test suite replays it from then on.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="build-fuzz" time_s=60 runs="" only="" work="" jobs=1 seed=""
while (($#)); do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --time) time_s="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_fuzzers.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
# One thread per harness: OpenMP teams on tiny tensors under ASan cost more than they give
# (onnx: 170 exec/s on two threads, 800 on one); --jobs is how a run uses more cores.
export SKIFF_NUM_THREADS="${SKIFF_NUM_THREADS:-1}"
build="$(cd "$build" 2>/dev/null && pwd)" || { echo "run_fuzzers.sh: no build directory (cmake --preset fuzz first)" >&2; exit 2; }
work="${work:-$build/fuzz_work}"
mkdir -p "$work"
[ -x "$build/bin/fuzz_make_seeds" ] || { echo "run_fuzzers.sh: $build/bin/fuzz_make_seeds is missing (cmake --build --preset fuzz --target skiff_fuzzers)" >&2; exit 2; }
[ -d "$work/seeds" ] || "$build/bin/fuzz_make_seeds" "$work/seeds" >/dev/null

if [ -n "$only" ]; then IFS=, read -r -a names <<<"$only"
else names=(); for f in "$build"/bin/fuzz_*; do n="${f##*/fuzz_}"; [ "$n" = make_seeds ] || names+=("$n"); done; fi

# The dictionary of each text format.
dict_for() {
  case "$1" in
    config|zoo_index|inference_config) echo "$here/dict/yaml.dict" ;;
    coco|captions|tfjs|tokenizer) echo "$here/dict/json.dict" ;;
    chat_template) echo "$here/dict/jinja.dict" ;;
    ocr_labels) echo "$here/dict/labels.dict" ;;
  esac
}

run_one() {
  local name="$1" bin="$build/bin/fuzz_$1"
  [ -x "$bin" ] || { echo "run_fuzzers.sh: no harness $bin" >&2; return 2; }
  local corpus="$work/corpus/$name" artifacts="$work/artifacts/$name" log="$work/logs/$name.log"
  mkdir -p "$corpus" "$artifacts" "$work/logs"
  local inputs=("$corpus")
  for d in "$here/corpus/$name" "$here/regressions/$name" "$work/seeds/$name"; do [ -d "$d" ] && inputs+=("$d"); done
  local args=(-rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 -max_len=65536 -print_final_stats=1
              -artifact_prefix="$artifacts/")
  if [ -n "$runs" ]; then args+=(-runs="$runs"); else args+=(-max_total_time="$time_s"); fi
  [ -n "$seed" ] && args+=(-seed="$seed")
  local dict; dict="$(dict_for "$name")"; [ -n "$dict" ] && args+=(-dict="$dict")
  local rc=0
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}" "$bin" "${args[@]}" "${inputs[@]}" >"$log" 2>&1 || rc=$?
  local execs speed cov
  # (|| true: a run stopped by a finding early may print no statistics)
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)"
  speed="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1 || true)"
  cov="$(grep -a -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)"
  local verdict="ok"
  if ((rc != 0)); then verdict="FINDING (see $log; input in $artifacts/)"; fi
  printf '%-18s %12s %10s %8s  %s\n' "$name" "${execs:-?}" "${speed:-?}" "${cov:-?}" "$verdict"
  return $((rc != 0))
}

printf '%-18s %12s %10s %8s  %s\n' harness executions "exec/s" edges result
status=0 running=0
for name in "${names[@]}"; do
  run_one "$name" &
  if ((++running >= jobs)); then wait -n || status=1; ((running--)); fi
done
while ((running > 0)); do wait -n || status=1; ((running--)); done
exit $status
