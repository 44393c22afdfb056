// `skiff bench ops`: GEMM, convolution and FFT timings, the same shapes that
// bench/pytorch_ops.py runs in PyTorch (bench/compare_ops.sh prints the ratios).
// Timing: 3 warm-up runs, then the median of runs totalling at least 0.5 s.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <sstream>

#include "apps/skiff/bench_timing.h"
#include "apps/skiff/commands.h"
#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/core/threading.h"
#include "framework/ops/linalg/linalg.h"
#include "framework/ops/nn/conv.h"
#include "framework/ops/ops.h"

namespace skiff::app {
namespace {

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
  std::string filter;
};

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

void run_ops_bench(const Options& o) {
  const std::vector<int> thread_counts = parse_threads_list(o.threads);
  auto wanted = [&](const std::string& name) { return o.filter.empty() || name.find(o.filter) != std::string::npos; };
  manual_seed(0);
  for (int nt : thread_counts) {
    set_num_threads(nt);
    for (int64_t n : {256, 512, 1024, 2048}) {
      std::string name = fmt::format("sgemm_{}", n);
      if (!wanted(name)) continue;
      Tensor a = randn({n, n}), b = randn({n, n});
      double t = median_seconds([&] { matmul(a, b); });
      report(o, name, nt, t, 2.0 * double(n) * double(n) * double(n) / t / 1e9);
    }
    for (const ConvCase& c : kConvCases) {
      std::string fwd = fmt::format("conv_{}_fwd", c.name), fwdbwd = fmt::format("conv_{}_fwdbwd", c.name);
      if (!wanted(fwd) && !wanted(fwdbwd)) continue;
      Tensor x = randn({c.n, c.c, c.h, c.w});
      Tensor w = randn({c.o, c.c / c.groups, c.k, c.k});
      Tensor bias = randn({c.o});
      auto conv = [&](const Tensor& xx, const Tensor& ww) {
        return conv2d(xx, ww, bias, {c.stride, c.stride}, {c.pad, c.pad}, {1, 1}, c.groups);
      };
      if (wanted(fwd)) {
        NoGradGuard ng;
        report(o, fwd, nt, median_seconds([&] { conv(x, w); }));
      }
      if (wanted(fwdbwd)) {
        Tensor xg = detach(x).set_requires_grad(), wg = detach(w).set_requires_grad();
        Tensor g = ones(conv(x, w).shape());
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
      Tensor x = randn({1, 64, 256, 256});
      report(o, "rfft2_64x256x256", nt, median_seconds([&] { rfft2(x); }));
    }
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Run benchmarks (compare with peers using bench/compare_*.sh)");
  bench->require_subcommand(1);
  add_bench_model_command(*bench);
  add_bench_ocr_command(*bench);
  add_bench_pinn_command(*bench);
  auto opts = std::make_shared<Options>();
  auto* ops = bench->add_subcommand("ops", "sgemm GFLOP/s (256..2048), conv2d forward / forward+backward and rfft2 times");
  ops->add_option("--threads-list", opts->threads, "Comma-separated thread counts to run with")->capture_default_str();
  ops->add_flag("--json", opts->json, "One JSON object per result (for bench/compare_ops.sh)");
  ops->add_option("--filter", opts->filter, "Only benchmarks whose name contains this text (e.g. sgemm, conv_a, rfft2)");
  ops->callback([opts] { run_ops_bench(*opts); });
}

}  // namespace skiff::app
