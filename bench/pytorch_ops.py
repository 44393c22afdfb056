#!/usr/bin/python3
"""PyTorch side of `skiff bench ops`: the same shapes, printed as JSON lines.

Run through bench/compare_ops.sh, which sets up the peer and prints ratios.
torch.set_num_threads(N) is set for every case: Debian's torch defaults to 1.

`pytorch_ops.py --check` prints, instead of times, what each case computes on
inputs both sides build exactly (shapes and checksums), as `skiff bench ops --check`
(apps/skiff/bench.cpp) does for skiff; compare_ops.sh compares them before timing.
"""
import json
import statistics
import sys
import time

import torch


def timeit(fn, min_time=0.5, min_reps=5, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < min_reps or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if len(times) > 1000:
            break
    return statistics.median(times)


CONV_CASES = {
    "a": dict(n=8, c=64, o=64, h=56, w=56, k=3, stride=1, pad=1, groups=1),
    "b": dict(n=1, c=3, o=32, h=640, w=640, k=3, stride=2, pad=1, groups=1),
    "c": dict(n=8, c=128, o=128, h=40, w=40, k=3, stride=1, pad=1, groups=128),
}


def pattern(shape, k):
    """v[i] = ((i * 7919 + k * 104729) mod 2003) / 1001.5 - 1 in float32 (see apps/skiff/bench.cpp)."""
    n = 1
    for d in shape:
        n *= d
    i = torch.arange(n, dtype=torch.int64)
    v = ((i * 7919 + k * 104729) % 2003).double() / 1001.5 - 1.0
    return v.float().reshape(shape)


def summary(t):
    t = t.detach()
    if t.is_complex():
        t = t.abs()
    d = t.double().reshape(-1)
    weights = (torch.arange(d.numel(), dtype=torch.int64) % 7 - 3).double()
    return {"shape": list(t.shape), "sum": d.sum().item(), "abs_sum": d.abs().sum().item(),
            "weighted_sum": (d * weights).sum().item()}


def check():
    torch.set_num_threads(1)
    for n in (256, 512, 1024, 2048):
        print(json.dumps({"bench": f"sgemm_{n}", **summary(torch.mm(pattern((n, n), 0), pattern((n, n), 1)))}))
    for name, p in CONV_CASES.items():
        x = pattern((p["n"], p["c"], p["h"], p["w"]), 0)
        w = pattern((p["o"], p["c"] // p["groups"], p["k"], p["k"]), 1)
        bias = pattern((p["o"],), 2)
        conv = lambda xx, ww: torch.nn.functional.conv2d(xx, ww, bias, stride=p["stride"], padding=p["pad"],
                                                         groups=p["groups"])
        with torch.no_grad():
            print(json.dumps({"bench": f"conv_{name}_fwd", **summary(conv(x, w))}))
        xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
        y = conv(xg, wg)
        y.backward(torch.ones_like(y))
        print(json.dumps({"bench": f"conv_{name}_fwdbwd", **summary(y), "grads": [summary(xg.grad), summary(wg.grad)]}))
        sys.stdout.flush()
    with torch.no_grad():
        print(json.dumps({"bench": "rfft2_64x256x256", **summary(torch.fft.rfft2(pattern((1, 64, 256, 256), 0)))}))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        check()
        return
    threads = [int(t) for t in (sys.argv[1] if len(sys.argv) > 1 else "1,2").split(",")]
    only = sys.argv[2] if len(sys.argv) > 2 else ""  # run only cases whose name contains it
    wanted = lambda name: only in name
    try:
        from peer_info import describe
        print(f"pytorch_ops: {describe()}", file=sys.stderr)
    except Exception as e:  # the report is informative; never fail the benchmark on it
        print(f"pytorch_ops: cannot describe the BLAS: {e}", file=sys.stderr)
    torch.manual_seed(0)
    for nt in threads:
        torch.set_num_threads(nt)
        for n in (256, 512, 1024, 2048):
            if not wanted(f"sgemm_{n}"):
                continue
            a, b = torch.randn(n, n), torch.randn(n, n)
            t = timeit(lambda: torch.mm(a, b))
            print(json.dumps({"bench": f"sgemm_{n}", "threads": nt, "seconds": t, "gflops": 2 * n**3 / t / 1e9}))
        for name, p in CONV_CASES.items():
            if not wanted(f"conv_{name}_fwd") and not wanted(f"conv_{name}_fwdbwd"):
                continue
            x = torch.randn(p["n"], p["c"], p["h"], p["w"])
            w = torch.randn(p["o"], p["c"] // p["groups"], p["k"], p["k"])
            bias = torch.randn(p["o"])
            conv = lambda xx, ww: torch.nn.functional.conv2d(xx, ww, bias, stride=p["stride"], padding=p["pad"],
                                                             groups=p["groups"])
            if wanted(f"conv_{name}_fwd"):
                with torch.no_grad():
                    t = timeit(lambda: conv(x, w))
                print(json.dumps({"bench": f"conv_{name}_fwd", "threads": nt, "seconds": t}))
            if wanted(f"conv_{name}_fwdbwd"):
                xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
                g = torch.ones_like(conv(x, w))

                def fwd_bwd():
                    y = conv(xg, wg)
                    y.backward(g)
                    xg.grad = None
                    wg.grad = None

                t = timeit(fwd_bwd)
                print(json.dumps({"bench": f"conv_{name}_fwdbwd", "threads": nt, "seconds": t}))
            sys.stdout.flush()
        if wanted("rfft2"):
            x = torch.randn(1, 64, 256, 256)
            with torch.no_grad():
                t = timeit(lambda: torch.fft.rfft2(x))
            print(json.dumps({"bench": "rfft2_64x256x256", "threads": nt, "seconds": t}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
