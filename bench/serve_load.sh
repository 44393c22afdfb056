#!/usr/bin/env bash
# Load and fault run of `skiff serve ocr` on loopback (bench/serve_load.py does the
# clients). Starts the server on a free port, runs the clients, stops the server with
# SIGTERM and checks it exits cleanly. Bounded in requests and time; stops by itself.
#
#   bench/serve_load.sh [--quick] [--requests N] [--memory N] [--workers W] [--out FILE]
#
#   --quick        CI's short run: 1 and 4 clients, 12 requests each, and the fault run
#   --requests N   answers per concurrency level (1, 4, 16 clients; default 200)
#   --memory N     then N more requests from 4 clients on one text-line image, with the
#                  server's resident memory sampled throughout (default 0: skipped)
#   --workers W    the server's --workers (default 1)
#   --out FILE     also write the JSON report there
# Exit status: 0 when every request was answered correctly and every fault got its 4xx.
set -euo pipefail
cd "$(dirname "$0")/.."
SKIFF_BIN="${SKIFF_BIN:-build/bin/skiff}"
quick=0 requests=200 memory=0 workers=1 out=""
while (($#)); do
  case "$1" in
    --quick) quick=1; shift ;;
    --requests) requests="$2"; shift 2 ;;
    --memory) memory="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "serve_load.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$SKIFF_BIN" ] || { echo "serve_load.sh: $SKIFF_BIN not found (build skiff first, or set SKIFF_BIN)" >&2; exit 2; }

work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

max_body_mb=8
read_timeout=2
"$SKIFF_BIN" serve ocr --port 0 --quiet --workers "$workers" --queue 64 --max-body-mb "$max_body_mb" \
  --read-timeout "$read_timeout" --timeout 120 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 1 600); do
  grep -q "listening on" "$work/server.log" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
  sleep 0.1
done
port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$work/server.log")
[ -n "$port" ] || { echo "serve_load.sh: the server did not start:" >&2; cat "$work/server.log" >&2; exit 1; }

client=(python3 bench/serve_load.py --port "$port" --pid "$server_pid" --max-body $((max_body_mb << 20)))
status=0
if [ "$quick" = 1 ]; then
  "${client[@]}" --images assets/samples/ocr_sample.png --expect "FRESH TIME MART" --levels 1,4 --requests 12 \
    --faults --loris 4 --loris-bytes 12 > "$work/report.json" || status=1
else
  "${client[@]}" --images assets/samples/ocr_sample.png --expect "FRESH TIME MART" --levels 1,4,16 \
    --requests "$requests" --time-limit 900 --faults > "$work/report.json" || status=1
  if [ "$memory" -gt 0 ]; then
    # A text-line image: the same pipeline at less time per request, so many more requests.
    "$SKIFF_BIN" ocr synth "$work/synth" --count 1 --seed 3 >/dev/null 2>&1
    line_image=$(ls "$work"/synth/crops/*.jpg | head -1)
    "${client[@]}" --images "$line_image" --levels 4 --requests "$memory" --time-limit 3000 \
      > "$work/memory.json" || status=1
    python3 - "$work/report.json" "$work/memory.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
report["memory_run"] = json.load(open(sys.argv[2]))
json.dump(report, open(sys.argv[1], "w"), indent=1)
PY
  fi
fi

# A graceful stop: SIGTERM, the server finishes and exits 0.
kill -TERM "$server_pid"
server_status=0
wait "$server_pid" || server_status=$?
server_pid=""
grep -q "skiff serve: stopped" "$work/server.log" || { echo "serve_load.sh: no clean stop" >&2; server_status=1; }
cat "$work/report.json"
[ -n "$out" ] && cp "$work/report.json" "$out"
[ "$server_status" = 0 ] || { echo "serve_load.sh: the server exited with $server_status:" >&2; tail -20 "$work/server.log" >&2; exit 1; }
exit "$status"
