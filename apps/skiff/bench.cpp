// `skiff bench ops`: GEMM, convolution and FFT timings, the same shapes that
// bench/pytorch_ops.py runs in PyTorch (bench/compare_ops.sh prints the ratios).
// Timing: 3 warm-up runs, then the median of runs totalling at least 0.5 s.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <functional>
#include <sstream>

#include "framework/cli/bench_timing.h"
#include "apps/skiff/commands.h"
#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/core/threading.h"
#include "framework/ops/linalg/linalg.h"
#include "framework/ops/nn/conv.h"
#include "framework/ops/ops.h"

namespace skiff::app {
namespace {

using cli::median_seconds;
using cli::parse_threads_list;

struct ConvCase {
  const char* name;
  int64_t n, c, o, h, w, k, stride, pad, groups;
};
constexpr ConvCase kConvCases[] = {
    {"a", 8, 64, 64, 56, 56, 3, 1, 1, 1},
    {"b", 1, 3, 32, 640, 640, 3, 2, 1, 1},
    {"c", 8, 128, 128, 40, 40, 3, 1, 1, 128},
};

struct Options {
  std::string threads = "1,2";
  bool json = false;
  bool check = false;
  std::string filter;
};

// --check inputs: the k-th tensor of a case holds v[i] = ((i * 7919 + k * 104729) mod 2003) / 1001.5 - 1
// (i the flat index, int64 arithmetic, then float32): values in [-1, 1], the same bits in
// bench/pytorch_ops.py --check, so both sides can be compared before they are timed.
Tensor pattern(const Shape& shape, int64_t k) {
  Tensor t = empty(shape, DType::Float32);
  float* p = t.data<float>();
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) p[i] = float(double((i * 7919 + k * 104729) % 2003) / 1001.5 - 1.0);
  return t;
}

// Shape, sum, sum of |x| and a position-weighted sum (element i weighs (i mod 7) - 3, so a
// permuted layout shows), accumulated in double. Complex results: their magnitudes.
nlohmann::json summary(const Tensor& t0) {
  Tensor t = t0.dtype() == DType::Float32 ? t0 : abs(t0);
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

void print_check(const std::string& bench, nlohmann::json j) {
  j["bench"] = bench;
  fmt::print("{}\n", j.dump());
  std::fflush(stdout);
}

void report(const Options& o, const std::string& bench, int threads, double seconds, double gflops = 0) {
  if (o.json) {
    nlohmann::json j{{"bench", bench}, {"threads", threads}, {"seconds", seconds}};
    if (gflops > 0) j["gflops"] = gflops;
    fmt::print("{}\n", j.dump());
  } else if (gflops > 0) {
    fmt::print("{:<20} threads={}  {:9.3f} ms  {:8.1f} GFLOP/s\n", bench, threads, seconds * 1e3, gflops);
  } else {
    fmt::print("{:<20} threads={}  {:9.3f} ms\n", bench, threads, seconds * 1e3);
  }
  std::fflush(stdout);
}

// Each case runs timed (random inputs), or with --check once on pattern() inputs, printing
// summary() of its outputs (and, for fwdbwd, of the input and weight gradients).
void run_ops_bench(const Options& o) {
  std::vector<int> thread_counts = parse_threads_list(o.threads);
  if (o.check) thread_counts.resize(1);  // the results do not depend on the thread count
  auto wanted = [&](const std::string& name) { return o.filter.empty() || name.find(o.filter) != std::string::npos; };
  auto input = [&](const Shape& shape, int64_t k) { return o.check ? pattern(shape, k) : randn(shape); };
  manual_seed(0);
  for (int nt : thread_counts) {
    set_num_threads(nt);
    for (int64_t n : {256, 512, 1024, 2048}) {
      std::string name = fmt::format("sgemm_{}", n);
      if (!wanted(name)) continue;
      Tensor a = input({n, n}, 0), b = input({n, n}, 1);
      if (o.check) {
        print_check(name, summary(matmul(a, b)));
        continue;
      }
      double t = median_seconds([&] { matmul(a, b); });
      report(o, name, nt, t, 2.0 * double(n) * double(n) * double(n) / t / 1e9);
    }
    for (const ConvCase& c : kConvCases) {
      std::string fwd = fmt::format("conv_{}_fwd", c.name), fwdbwd = fmt::format("conv_{}_fwdbwd", c.name);
      if (!wanted(fwd) && !wanted(fwdbwd)) continue;
      Tensor x = input({c.n, c.c, c.h, c.w}, 0);
      Tensor w = input({c.o, c.c / c.groups, c.k, c.k}, 1);
      Tensor bias = input({c.o}, 2);
      auto conv = [&](const Tensor& xx, const Tensor& ww) {
        return conv2d(xx, ww, bias, {c.stride, c.stride}, {c.pad, c.pad}, {1, 1}, c.groups);
      };
      if (wanted(fwd)) {
        NoGradGuard ng;
        if (o.check) print_check(fwd, summary(conv(x, w)));
        else report(o, fwd, nt, median_seconds([&] { conv(x, w); }));
      }
      if (wanted(fwdbwd)) {
        Tensor xg = detach(x).set_requires_grad(), wg = detach(w).set_requires_grad();
        Tensor g = ones(conv(x, w).shape());
        if (o.check) {
          Tensor y = conv(xg, wg);
          autograd::backward({y}, {g});
          nlohmann::json j = summary(y);
          j["grads"] = {summary(xg.grad()), summary(wg.grad())};
          print_check(fwdbwd, j);
          continue;
        }
        report(o, fwdbwd, nt, median_seconds([&] {
          Tensor y = conv(xg, wg);
          autograd::backward({y}, {g});
          xg.set_grad(Tensor());
          wg.set_grad(Tensor());
        }));
      }
    }
    if (wanted("rfft2")) {
      // A batch of 2-D real spectra, forward only (fft.h).
      NoGradGuard ng;
      Tensor x = input({1, 64, 256, 256}, 0);
      if (o.check) print_check("rfft2_64x256x256", summary(rfft2(x)));
      else report(o, "rfft2_64x256x256", nt, median_seconds([&] { rfft2(x); }));
    }
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Run benchmarks (compare with peers using bench/compare_*.sh)");
  bench->require_subcommand(1);
  add_bench_model_command(*bench);
  auto opts = std::make_shared<Options>();
  auto* ops = bench->add_subcommand("ops", "sgemm GFLOP/s (256..2048), conv2d forward / forward+backward and rfft2 times");
  ops->add_option("--threads-list", opts->threads, "Comma-separated thread counts to run with")->capture_default_str();
  ops->add_flag("--json", opts->json, "One JSON object per result (for bench/compare_ops.sh)");
  ops->add_flag("--check", opts->check,
                "Time nothing: compute each case once on fixed inputs and print its output shape and checksums "
                "as JSON (bench/compare_ops.sh compares them with PyTorch's)");
  ops->add_option("--filter", opts->filter, "Only benchmarks whose name contains this text (e.g. sgemm, conv_a, rfft2)");
  ops->callback([opts] { run_ops_bench(*opts); });
}

}  // namespace skiff::app
