#!/usr/bin/python3
"""PyTorch side of `skiff bench ops`: the same shapes, printed as JSON lines.

Run through bench/compare_ops.sh, which sets up the peer and prints ratios.
torch.set_num_threads(N) is set for every case: Debian's torch defaults to 1.
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


def main():
    threads = [int(t) for t in (sys.argv[1] if len(sys.argv) > 1 else "1,2").split(",")]
    torch.manual_seed(0)
    with torch.no_grad():
        pass
    for nt in threads:
        torch.set_num_threads(nt)
        for n in (256, 512, 1024, 2048):
            a, b = torch.randn(n, n), torch.randn(n, n)
            t = timeit(lambda: torch.mm(a, b))
            print(json.dumps({"bench": f"sgemm_{n}", "threads": nt, "seconds": t, "gflops": 2 * n**3 / t / 1e9}))
        for name, p in CONV_CASES.items():
            x = torch.randn(p["n"], p["c"], p["h"], p["w"])
            w = torch.randn(p["o"], p["c"] // p["groups"], p["k"], p["k"])
            bias = torch.randn(p["o"])
            conv = lambda xx, ww: torch.nn.functional.conv2d(xx, ww, bias, stride=p["stride"], padding=p["pad"],
                                                             groups=p["groups"])
            with torch.no_grad():
                t = timeit(lambda: conv(x, w))
            print(json.dumps({"bench": f"conv_{name}_fwd", "threads": nt, "seconds": t}))
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
        x = torch.randn(1, 64, 256, 256)
        with torch.no_grad():
            t = timeit(lambda: torch.fft.rfft2(x))
        print(json.dumps({"bench": "rfft2_64x256x256", "threads": nt, "seconds": t}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
