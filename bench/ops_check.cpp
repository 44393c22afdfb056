// skiff_ops_check: what `skiff bench ops` computes, on inputs both sides can build
// exactly, so bench/compare_ops.sh can check that skiff and PyTorch compute the same
// thing (output shapes and checksums) before it compares their times.
// bench/pytorch_ops.py --check prints the same lines for PyTorch.
//
// Inputs: the k-th tensor of a case holds v[i] = ((i * 7919 + k * 104729) mod 2003) / 1001.5 - 1
// (i the flat index, int64 arithmetic, then float32): values in [-1, 1], the same bits on
// both sides. The cases and shapes are those of apps/skiff/bench.cpp (`skiff bench ops`):
// sgemm n x n (256..2048), conv a/b/c forward and forward+backward (upstream gradient
// of ones; the gradients of x and w are checked), rfft2 of [1, 64, 256, 256].
// One JSON line per case: {"bench", "shape", "sum", "abs_sum", "weighted_sum"} (the last
// weighs element i by (i mod 7) - 3, so a permuted layout shows) plus, for fwdbwd,
// "grads": the same for dx and dw. Sums are accumulated in double.
//
//   skiff_ops_check [--filter TEXT]
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "framework/autograd/engine.h"
#include "framework/core/threading.h"
#include "framework/ops/ops.h"

namespace skiff::bench {
namespace {

struct ConvCase {
  const char* name;
  int64_t n, c, o, h, w, k, stride, pad, groups;
};
// Keep in step with kConvCases in apps/skiff/bench.cpp and CONV_CASES in bench/pytorch_ops.py.
constexpr ConvCase kConvCases[] = {
    {"a", 8, 64, 64, 56, 56, 3, 1, 1, 1},
    {"b", 1, 3, 32, 640, 640, 3, 2, 1, 1},
    {"c", 8, 128, 128, 40, 40, 3, 1, 1, 128},
};

Tensor pattern(const Shape& shape, int64_t k) {
  Tensor t = empty(shape, DType::Float32);
  float* p = t.data<float>();
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) p[i] = float(double((i * 7919 + k * 104729) % 2003) / 1001.5 - 1.0);
  return t;
}

nlohmann::json summary(const Tensor& t0) {
  Tensor t = t0.dtype() == DType::Float32 ? t0 : abs(t0);  // complex: magnitudes
  t = t.is_contiguous() ? t : skiff::detail::contiguous_copy(t);
  double s = 0, a = 0, ws = 0;
  const float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    s += double(p[i]), a += std::fabs(double(p[i]));
    ws += double(p[i]) * double(i % 7 - 3);
  }
  std::vector<int64_t> shape(t0.shape().begin(), t0.shape().end());
  return {{"shape", shape}, {"sum", s}, {"abs_sum", a}, {"weighted_sum", ws}};
}

void print(const std::string& bench, nlohmann::json j) {
  j["bench"] = bench;
  fmt::print("{}\n", j.dump());
  std::fflush(stdout);
}

int run(const std::string& filter) {
  auto wanted = [&](const std::string& name) { return filter.empty() || name.find(filter) != std::string::npos; };
  for (int64_t n : {256, 512, 1024, 2048}) {
    std::string name = fmt::format("sgemm_{}", n);
    if (wanted(name)) print(name, summary(matmul(pattern({n, n}, 0), pattern({n, n}, 1))));
  }
  for (const ConvCase& c : kConvCases) {
    std::string fwd = fmt::format("conv_{}_fwd", c.name), fwdbwd = fmt::format("conv_{}_fwdbwd", c.name);
    if (!wanted(fwd) && !wanted(fwdbwd)) continue;
    Tensor x = pattern({c.n, c.c, c.h, c.w}, 0), w = pattern({c.o, c.c / c.groups, c.k, c.k}, 1), bias = pattern({c.o}, 2);
    auto conv = [&](const Tensor& xx, const Tensor& ww) {
      return conv2d(xx, ww, bias, {c.stride, c.stride}, {c.pad, c.pad}, {1, 1}, c.groups);
    };
    if (wanted(fwd)) {
      NoGradGuard ng;
      print(fwd, summary(conv(x, w)));
    }
    if (wanted(fwdbwd)) {
      Tensor xg = detach(x).set_requires_grad(), wg = detach(w).set_requires_grad();
      Tensor y = conv(xg, wg);
      autograd::backward({y}, {ones(y.shape())});
      nlohmann::json j = summary(y);
      j["grads"] = {summary(xg.grad()), summary(wg.grad())};
      print(fwdbwd, j);
    }
  }
  if (wanted("rfft2")) {
    NoGradGuard ng;
    print("rfft2_64x256x256", summary(rfft2(pattern({1, 64, 256, 256}, 0))));
  }
  return 0;
}

}  // namespace
}  // namespace skiff::bench

int main(int argc, char** argv) {
  std::string filter;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
      filter = argv[++i];
    } else {
      fmt::print(stderr, "usage: skiff_ops_check [--filter TEXT]\n");
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  try {
    return skiff::bench::run(filter);
  } catch (const std::exception& e) {
    fmt::print(stderr, "skiff_ops_check: {}\n", e.what());
    return 1;
  }
}
