#!/usr/bin/env bash
# `skiff serve` as a user runs it: refusals at start, POST /ocr in PaddleX serving's
# layout with per-request settings and pictures, files under --files-root, a model at
# /v1/models, then the short load and fault run (bench/serve_load.sh --quick), which
# ends with a SIGTERM stop. Usage: serve_cli_test.sh SKIFF_BINARY REPO_ROOT
set -u
SKIFF="$1"
ROOT="$2"
SAMPLE="$ROOT/assets/samples/ocr_sample.png"
source "$(dirname "$0")/check.sh"

# start_server LOG ARGS...: `skiff serve ARGS --port 0` in the background; sets pid and port.
start_server() {
  local log="$1"
  shift
  "$SKIFF" serve "$@" --port 0 2>"$log" &
  pid=$!
  for _ in $(seq 1 600); do grep -q "listening on" "$log" && break; sleep 0.1; done
  port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$log")
}

"$SKIFF" serve 2>"$TMP/none.txt"; rc=$?
check "nothing to serve: exit 2" test "$rc" -eq 2
check "nothing to serve: names the endpoints" grep -q "name an endpoint (.*ocr" "$TMP/none.txt"
"$SKIFF" serve orc 2>"$TMP/typo.txt"; rc=$?
check "unknown endpoint: exit 2 with a hint" test "$rc" -eq 2
check "unknown endpoint: did you mean" grep -q "did you mean 'ocr'" "$TMP/typo.txt"
"$SKIFF" serve ocr --set ocr.det_modle=x.onnx 2>"$TMP/set.txt"; rc=$?
check "unknown setting: exit 2" test "$rc" -eq 2
check "unknown setting: did you mean" grep -q "did you mean 'det_model'" "$TMP/set.txt"
"$SKIFF" serve ocr --set det.x=1 2>"$TMP/set2.txt"; rc=$?
check "setting for an endpoint not served: exit 2" test "$rc" -eq 2

# A server with files under a root, the classifier off, and a model endpoint.
mkdir -p "$TMP/files" && cp "$SAMPLE" "$TMP/files/receipt.png"
start_server "$TMP/server.log" ocr --set ocr.use_textline_orientation=false --files-root "$TMP/files" \
  --model det=ppocr-v4-det
check "server: started" test -n "$port"

python3 - "$port" "$SAMPLE" "$TMP" >"$TMP/client.txt" 2>&1 <<'PY'
import base64, http.client, json, sys
port, sample, tmp = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def post(path, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = c.getresponse()
    return r.status, json.loads(r.read())
image = base64.b64encode(open(sample, "rb").read()).decode()
status, r = post("/ocr", {"file": image, "fileType": 1})
assert status == 200 and r["errorCode"] == 0 and r["errorMsg"] == "Success" and len(r["logId"]) == 24, r
page = r["result"]["ocrResults"][0]
texts = page["prunedResult"]["rec_texts"]
assert len(texts) == 13 and "合计：109.70元" in texts and "FRESH TIME MART" in texts, texts
assert r["result"]["dataInfo"] == {"type": "image", "width": 800, "height": 795}, r["result"]["dataInfo"]
assert page["ocrImage"] is None
print("ocr ok")
# Per-request settings: a stricter recognizer threshold keeps fewer lines; a picture on request.
status, strict = post("/ocr", {"file": image, "textRecScoreThresh": 0.999, "visualize": True})
assert status == 200 and len(strict["result"]["ocrResults"][0]["prunedResult"]["rec_texts"]) < 13, strict
jpeg = base64.b64decode(strict["result"]["ocrResults"][0]["ocrImage"])
assert jpeg[:3] == b"\xff\xd8\xff", jpeg[:8]
print("overrides ok")
# Files under the root by name; outside it refused.
status, byname = post("/ocr", {"file": "receipt.png"})
assert status == 200 and byname["result"]["ocrResults"][0]["prunedResult"]["rec_texts"] == texts, byname
status, outside = post("/ocr", {"file": "../" + sample.split("/")[-1]})
assert status == 400 and "files root" in outside["errorMsg"], outside
# Refusals name the field.
for body, part in [({"file": image, "fileType": 0}, "fileType: 0 (PDF)"),
                   ({"file": image, "useTextlineOrientation": True}, "useTextlineOrientation"),
                   ({"file": image, "textDetThresh": 3}, "textDetThresh"),
                   ({"image": image}, "unknown field 'image'")]:
    status, e = post("/ocr", body)
    assert status == 400 and e["errorCode"] == 400 and part in e["errorMsg"], (body.keys(), e)
print("refusals ok")
# The detector as a raw model: a probability map the size of the input.
x = {"shape": [1, 3, 64, 96], "dtype": "float32", "b64": base64.b64encode(bytes(4 * 3 * 64 * 96)).decode()}
status, m = post("/v1/models/det:predict", {"inputs": {"x": x}, "binary": True})
assert status == 200, m
out = list(m["result"]["outputs"].values())[0]
assert out["shape"] == [1, 1, 64, 96] and out["dtype"] == "float32", out["shape"]
print("model ok")
c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
c.request("GET", "/metrics")
metrics = c.getresponse().read().decode()
assert 'skiff_requests_total{route="ocr",code="200"} 3' in metrics, metrics
assert 'skiff_requests_total{route="ocr",code="400"} 5' in metrics, metrics
print("metrics ok")
PY
rc=$?
check "client: every check passed" test "$rc" -eq 0
[ "$rc" -eq 0 ] || cat "$TMP/client.txt"
kill -TERM "$pid"; wait "$pid"; rc=$?
check "SIGTERM: exit 0" test "$rc" -eq 0
check "SIGTERM: stopped cleanly" grep -q "skiff serve: stopped" "$TMP/server.log"

# Object detection in PaddleX's layout, on python3-skimage's astronaut (NanoDet from the zoo).
IMAGES=/usr/lib/python3/dist-packages/skimage/data
start_server "$TMP/det_server.log" det --quiet --set det.threshold=0.3
python3 - "$port" "$IMAGES/astronaut.png" >"$TMP/det_client.txt" 2>&1 <<'PY'
import base64, http.client, json, sys
port, image = int(sys.argv[1]), base64.b64encode(open(sys.argv[2], "rb").read()).decode()
def post(body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", "/det", body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = c.getresponse()
    return r.status, json.loads(r.read())
status, r = post({"image": image})
objects = r["result"]["detectedObjects"]
assert status == 200 and any(o["categoryName"] == "person" for o in objects), r
assert all(len(o["bbox"]) == 4 and o["score"] >= 0.3 and o["categoryId"] >= 0 for o in objects), objects
assert r["result"]["image"] is None
status, strict = post({"image": image, "threshold": 0.9, "visualize": True})
assert status == 200 and len(strict["result"]["detectedObjects"]) < len(objects), strict["result"]["detectedObjects"]
assert base64.b64decode(strict["result"]["image"])[:3] == b"\xff\xd8\xff"
status, low = post({"image": image, "threshold": 0.1})
assert status == 400 and "below the server's" in low["errorMsg"], low
print("det ok")
PY
rc=$?
check "det: objects in PaddleX's layout, thresholds, pictures" test "$rc" -eq 0
[ "$rc" -eq 0 ] || cat "$TMP/det_client.txt"
kill -TERM "$pid"; wait "$pid"; rc=$?
check "det server: exit 0 on SIGTERM" test "$rc" -eq 0

# Text generation, whole and streamed (server-sent events), on the tiny LLaMA fixture.
MODEL="$ROOT/tests/data/llama/tiny"
"$SKIFF" nlp generate --model "$MODEL" --prompt "hello world" --max_new_tokens 8 >"$TMP/cli_gen.txt" 2>/dev/null
start_server "$TMP/gen_server.log" nlp/generate --quiet --set "nlp/generate.model=$MODEL"
python3 - "$port" "$TMP/cli_gen.txt" >"$TMP/gen_client.txt" 2>&1 <<'PY'
import http.client, json, sys
port, cli_text = int(sys.argv[1]), open(sys.argv[2], encoding="utf-8").read().rstrip("\n")
def post(body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("POST", "/nlp/generate", body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = c.getresponse()
    return r.status, r.getheader("Content-Type"), r.read().decode("utf-8")
status, _, body = post({"prompt": "hello world", "maxNewTokens": 8})
whole = json.loads(body)
assert status == 200 and whole["result"]["newTokens"] == 8 and whole["result"]["stopReason"] == "length", whole
assert whole["result"]["text"] == cli_text, (whole["result"]["text"], cli_text)
status, ctype, body = post({"prompt": "hello world", "maxNewTokens": 8, "stream": True})
events = [json.loads(e[len("data: "):]) for e in body.split("\n\n") if e.startswith("data: ")]
assert status == 200 and ctype == "text/event-stream" and len(events) >= 2, body
pieces = "".join(e["text"] for e in events[:-1])
assert events[-1]["errorCode"] == 0 and pieces == whole["result"]["text"], (pieces, events[-1])
first = whole["result"]["text"].strip()[:1]
status, _, body = post({"prompt": "hello world", "maxNewTokens": 8, "stop": [first]})
stopped = json.loads(body)["result"]
assert stopped["stopReason"] == "stop" and stopped["newTokens"] < 8, stopped
for bad, part in [({"prompt": "x", "temperature": -1}, "temperature"), ({"prompt": ""}, "prompt"),
                  ({"prompt": "x", "stop": "\n"}, "stop")]:
    status, _, body = post(bad)
    assert status == 400 and part in json.loads(body)["errorMsg"], (bad, body)
print("generate ok")
PY
rc=$?
check "nlp/generate: whole, streamed, stop strings and refusals" test "$rc" -eq 0
[ "$rc" -eq 0 ] || cat "$TMP/gen_client.txt"
kill -TERM "$pid"; wait "$pid"; rc=$?
check "nlp/generate server: exit 0 on SIGTERM" test "$rc" -eq 0

SKIFF_BIN="$SKIFF" bash "$ROOT/bench/serve_load.sh" --quick >"$TMP/load.json" 2>"$TMP/load.err"; rc=$?
check "load and fault run (short): passed" test "$rc" -eq 0
[ "$rc" -eq 0 ] || { cat "$TMP/load.json"; tail -20 "$TMP/load.err"; }

echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
exit $((fails == 0 ? 0 : 1))
