#!/usr/bin/env bash
# Installs the peer used by bench/compare_ops.sh: Debian's PyTorch with the
# OpenMP build of OpenBLAS. Without libopenblas0-openmp Debian's torch falls
# back to the reference BLAS and its GEMM is ~10x slower, an unfair peer.
# Only the benchmarks need this; the test set-up never installs it.
set -euo pipefail
PKGS=(python3-torch libopenblas0-openmp)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
# Make sure the OpenMP OpenBLAS is the BLAS that torch loads.
/usr/bin/python3 - <<'PY'
import torch  # noqa: F401
maps = open("/proc/self/maps").read()
assert "openblas-openmp" in maps, "torch did not load the OpenMP OpenBLAS; check update-alternatives libblas.so.3"
print("peer ready: torch", torch.__version__, "with OpenBLAS (OpenMP)")
PY
