# Sourced by bench/compare_*.sh: runs the PyTorch peer on this machine's best
# OpenBLAS kernels and says which ones it ran.
#
# Some machines export OPENBLAS_CORETYPE (e.g. Haswell) and OPENBLAS_L2_SIZE for
# their own tools; they hold PyTorch's OpenBLAS to AVX2 kernels (sgemm 1024: ~95
# GFLOP/s instead of ~190 on one core), an unfair peer. `peer CMD...` runs CMD with
# both unset, for the peer only (skiff does not use OpenBLAS); `peer_blas_report`
# prints, from a process started the same way, the OpenBLAS core and threading
# layer torch loaded (threadpoolctl, as scikit-learn reports it).
PEER_PYTHON="${PEER_PYTHON:-/usr/bin/python3}"
peer() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$@"; }
peer_blas_report() {
  local who="${1:-compare}"
  if [ -n "${OPENBLAS_CORETYPE:-}${OPENBLAS_L2_SIZE:-}" ]; then
    echo "$who: unset for the peer: OPENBLAS_CORETYPE='${OPENBLAS_CORETYPE:-}' OPENBLAS_L2_SIZE='${OPENBLAS_L2_SIZE:-}'" >&2
  fi
  peer "$PEER_PYTHON" "$(dirname "${BASH_SOURCE[0]}")/peer_info.py" "$who" >&2
}
