#!/usr/bin/env python3
"""Load and fault client for `skiff serve` (loopback only; stops by itself).

Load: for each concurrency level, that many clients post the images to /ocr until
REQUESTS answers or TIME_LIMIT seconds; reports throughput, p50/p99 latency, errors,
lost requests, and the server's resident memory (from /proc/PID) over the run.

Faults (--faults): while a well-behaved client keeps posting, other clients disconnect
mid-upload, drop the connection before reading the answer, trickle their headers
(slow loris), send oversized and corrupt bodies. Every well-behaved request must get
a correct answer, and each bad one its 4xx.

Exit status 1 when a request was lost, a well-behaved request failed, or a fault got
the wrong answer; the figures go to stdout as JSON (one object).
"""
import argparse
import base64
import http.client
import json
import os
import socket
import statistics
import sys
import threading
import time


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def post(host, port, path, body, timeout=120, content_type="application/json"):
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": content_type})
        res = conn.getresponse()
        return res.status, res.read()
    finally:
        conn.close()


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    k = min(len(values) - 1, max(0, int(round(p / 100.0 * (len(values) - 1)))))
    return values[k]


def load_level(args, bodies, clients, expected):
    """`clients` threads post until args.requests answers or args.time_limit seconds."""
    lock = threading.Lock()
    latencies, errors, lost = [], [], []
    issued = [0]
    deadline = time.monotonic() + args.time_limit
    rss = []

    def take():
        with lock:
            if issued[0] >= args.requests or time.monotonic() > deadline:
                return None
            issued[0] += 1
            return issued[0]

    def client():
        while (n := take()) is not None:
            body = bodies[n % len(bodies)]
            start = time.monotonic()
            try:
                status, payload = post(args.host, args.port, "/ocr", body)
            except Exception as e:  # no answer at all: the request is lost
                with lock:
                    lost.append(repr(e))
                continue
            took = time.monotonic() - start
            ok = status == 200
            if ok and expected:
                texts = json.loads(payload)["result"]["ocrResults"][0]["prunedResult"]["rec_texts"]
                ok = expected in texts
            with lock:
                latencies.append(took)
                if not ok:
                    errors.append(f"{status} {payload[:200]!r}")
                if args.pid and len(latencies) % 50 == 0:
                    rss.append(rss_kib(args.pid))

    started = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    rss = [r for r in rss if r]
    return {
        "clients": clients,
        "requests": len(latencies) + len(lost),
        "seconds": round(wall, 2),
        "throughput_rps": round(len(latencies) / wall, 2) if wall > 0 else None,
        "p50_ms": round(1e3 * percentile(latencies, 50), 1) if latencies else None,
        "p99_ms": round(1e3 * percentile(latencies, 99), 1) if latencies else None,
        "errors": len(errors),
        "lost": len(lost),
        "first_errors": errors[:3] + lost[:3],
        "rss_kib_first": rss[0] if rss else None,
        "rss_kib_last": rss[-1] if rss else None,
        "rss_kib_max": max(rss) if rss else None,
    }


def raw_request(host, port, head, body=b"", read=True, timeout=30):
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        s.sendall(head + body)
        if not read:
            return None
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        return data
    finally:
        s.close()


def faults(args, good_body, expected):
    host, port = args.host, args.port
    results = {}
    stop = threading.Event()
    good = {"ok": 0, "bad": []}

    def well_behaved():
        while not stop.is_set():
            try:
                status, payload = post(host, port, "/ocr", good_body)
                texts = json.loads(payload)["result"]["ocrResults"][0]["prunedResult"]["rec_texts"] if status == 200 else []
                if status == 200 and (not expected or expected in texts):
                    good["ok"] += 1
                else:
                    good["bad"].append(f"{status} {payload[:200]!r}")
            except Exception as e:
                good["bad"].append(repr(e))

    background = threading.Thread(target=well_behaved)
    background.start()

    # Slow loris: connections that trickle their headers, one byte per half second.
    def slow_loris(n_bytes):
        try:
            s = socket.create_connection((host, port), timeout=60)
            line = b"POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Slow: " + b"a" * 200
            closed_by_server = False
            for i in range(min(n_bytes, len(line))):
                try:
                    s.send(line[i:i + 1])
                except OSError:
                    closed_by_server = True
                    break
                time.sleep(0.5)
            s.close()
            return closed_by_server
        except OSError:
            return True

    loris = [threading.Thread(target=slow_loris, args=(args.loris_bytes,)) for _ in range(args.loris)]
    for t in loris:
        t.start()

    # Disconnect mid-upload: announce 1 MB, send 1 KB, hang up.
    for _ in range(5):
        raw_request(host, port, b"POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n",
                    b"{" + b" " * 1000, read=False)
    # Hang up before the answer comes: the server computes it and writes to a closed socket.
    for _ in range(3):
        raw_request(host, port, b"POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(good_body),
                    good_body, read=False)
    # Oversized: the server refuses before reading it all.
    answer = raw_request(host, port, b"POST /ocr HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % (args.max_body + 1))
    results["oversized"] = answer.split(b"\r\n", 1)[0].decode(errors="replace") if answer else "no answer"
    # Corrupt bodies: each a 400 naming the problem.
    corrupt = {
        "not_json": b"\x00\xff{{{",
        "bad_base64": json.dumps({"file": "%%%not base64%%%"}).encode(),
        "not_an_image": json.dumps({"file": base64.b64encode(os.urandom(4096)).decode()}).encode(),
        "truncated_png": json.dumps({"file": base64.b64encode(base64.b64decode(json.loads(good_body)["file"])[:2000]).decode()}).encode(),
        "wrong_type": json.dumps({"file": 12}).encode(),
    }
    for name, body in corrupt.items():
        status, payload = post(host, port, "/ocr", body)
        results[name] = f"{status} {json.loads(payload).get('errorMsg', '')[:120]}"
    for t in loris:
        t.join()
    stop.set()
    background.join()
    status, _ = post(host, port, "/ocr", good_body)
    results["after_faults"] = status
    results["well_behaved_ok"] = good["ok"]
    results["well_behaved_failed"] = good["bad"][:3]
    failed = []
    if not results["oversized"].startswith("HTTP/1.1 413"):
        failed.append("oversized: " + results["oversized"])
    for name in corrupt:
        if not results[name].startswith("400 "):
            failed.append(f"{name}: {results[name]}")
    if good["bad"] or good["ok"] == 0 or status != 200:
        failed.append("the well-behaved client was not served throughout")
    return results, failed


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--pid", type=int, help="the server's process id (for its memory)")
    p.add_argument("--images", nargs="+", required=True)
    p.add_argument("--expect", default="", help="a line every answer for the first image must contain")
    p.add_argument("--levels", default="1,4,16")
    p.add_argument("--requests", type=int, default=100, help="answers per level")
    p.add_argument("--time-limit", type=float, default=300, help="seconds per level at most")
    p.add_argument("--faults", action="store_true")
    p.add_argument("--loris", type=int, default=4, help="slow-loris connections")
    p.add_argument("--loris-bytes", type=int, default=12, help="bytes each trickles (one per 0.5 s)")
    p.add_argument("--max-body", type=int, default=48 << 20, help="the server's --max-body-mb in bytes")
    args = p.parse_args()
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("serve_load: loopback only")
    bodies = []
    for path in args.images:
        with open(path, "rb") as f:
            bodies.append(json.dumps({"file": base64.b64encode(f.read()).decode(), "fileType": 1}).encode())
    # The expected line holds for the first image only: load with it alone when one is given.
    load_bodies = bodies[:1] if args.expect else bodies
    report = {"levels": [], "rss_kib_start": rss_kib(args.pid) if args.pid else None}
    failed = []
    for level in [int(x) for x in args.levels.split(",") if x]:
        r = load_level(args, load_bodies, level, args.expect)
        report["levels"].append(r)
        if r["errors"] or r["lost"]:
            failed.append(f"{level} clients: {r['errors']} errors, {r['lost']} lost: {r['first_errors']}")
    if args.faults:
        report["faults"], fault_failures = faults(args, bodies[0], args.expect)
        failed += fault_failures
    report["rss_kib_end"] = rss_kib(args.pid) if args.pid else None
    report["failed"] = failed
    print(json.dumps(report, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
