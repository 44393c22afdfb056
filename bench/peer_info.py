#!/usr/bin/python3
"""Prints which BLAS the PyTorch peer runs: torch version, OpenBLAS version, core
(the kernel set OpenBLAS picked, e.g. Haswell or SkylakeX or Zen), threading layer
and the OPENBLAS_* variables the process sees. Imported by bench/pytorch_*.py (one
line on stderr when they start) and run by bench/peer_env.sh's peer_blas_report.
"""
import os
import sys


def describe():
    import torch

    parts = [f"torch {torch.__version__}"]
    try:
        import threadpoolctl

        blas = [i for i in threadpoolctl.threadpool_info() if i.get("internal_api") == "openblas"]
        for b in blas:
            parts.append(f"OpenBLAS {b.get('version')} core {b.get('architecture')} "
                         f"({b.get('threading_layer')}, {b.get('num_threads')} threads, {os.path.basename(b.get('filepath', ''))})")
        if not blas:
            parts.append("no OpenBLAS loaded")
    except ImportError:
        parts.append("OpenBLAS core unknown (python3-threadpoolctl not installed)")
    env = {k: v for k, v in os.environ.items() if k.startswith("OPENBLAS")}
    parts.append(f"env {env}" if env else "no OPENBLAS_* variables")
    return "; ".join(parts)


if __name__ == "__main__":
    print(f"{sys.argv[1] if len(sys.argv) > 1 else 'peer'}: peer runs {describe()}")
