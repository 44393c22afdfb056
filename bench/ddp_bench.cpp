// skiff_ddp_bench: data-parallel training throughput and all-reduce bandwidth, the twin of
// bench/pytorch_ddp.py (bench/compare_ddp.sh runs both and prints the ratios).
//   model  MLP 784 -> 1024 -> 1024 -> 10 with ReLU (1.86 M parameters, 7.4 MB of gradients),
//          cross-entropy, SGD with momentum; `--batch` rows per rank per step
//   allreduce  float32 all-reduce (sum) of 1, 4, 16, 64 MiB
// Run alone it trains on one process; under `skiff launch` on every rank (DataParallel),
// and also times the all-reduces. One JSON line per result (rank 0 prints).
//   skiff_ddp_bench [--steps 30] [--warmup 5] [--batch 64] [--sizes-mib 1,4,16,64]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "framework/autograd/engine.h"
#include "framework/distributed/data_parallel.h"
#include "framework/distributed/process_group.h"
#include "framework/nn/activation.h"
#include "framework/nn/containers.h"
#include "framework/nn/linear.h"
#include "framework/ops/ops.h"
#include "framework/optim/optimizers.h"

using namespace skiff;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int arg_int(int argc, char** argv, const std::string& name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return std::atoi(argv[i + 1]);
  return fallback;
}

std::vector<int> arg_list(int argc, char** argv, const std::string& name, std::vector<int> fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) {
      std::vector<int> out;
      std::string s = argv[i + 1];
      for (size_t pos = 0; pos <= s.size();) {
        size_t comma = s.find(',', pos);
        out.push_back(std::atoi(s.substr(pos, comma - pos).c_str()));
        if (comma == std::string::npos) break;
        pos = comma + 1;
      }
      return out;
    }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = arg_int(argc, argv, "--steps", 30), warmup = arg_int(argc, argv, "--warmup", 5);
  const int batch = arg_int(argc, argv, "--batch", 64);
  const auto sizes = arg_list(argc, argv, "--sizes-mib", {1, 4, 16, 64});
  auto group = distributed::world();
  const int world = group ? group->size() : 1, rank = group ? group->rank() : 0;

  manual_seed(0);
  auto net = std::make_shared<nn::Sequential>();
  net->push_back(std::make_shared<nn::Linear>(784, 1024));
  net->push_back(std::make_shared<nn::ReLU>());
  net->push_back(std::make_shared<nn::Linear>(1024, 1024));
  net->push_back(std::make_shared<nn::ReLU>());
  net->push_back(std::make_shared<nn::Linear>(1024, 10));
  std::unique_ptr<distributed::DataParallel> ddp;
  if (group) ddp = std::make_unique<distributed::DataParallel>(*net, group);
  optim::SGD opt(net->parameters(), {.lr = 0.01, .momentum = 0.9});
  Generator gen(uint64_t(1 + rank));
  Tensor x = randn({batch, 784}, DType::Float32, &gen);
  Tensor y = randint(0, 10, {batch}, DType::Int64, &gen);

  std::vector<double> times;
  for (int s = 0; s < warmup + steps; ++s) {
    auto t0 = Clock::now();
    opt.zero_grad();
    backward(cross_entropy((*net)(x), y));
    if (ddp) ddp->finish_gradient_sync();
    opt.step();
    if (s >= warmup) times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  const double step_s = median(times);
  if (rank == 0)
    fmt::print("{{\"what\": \"train\", \"ranks\": {}, \"batch_per_rank\": {}, \"step_ms\": {:.3f}, "
               "\"samples_per_s\": {:.1f}}}\n", world, batch, step_s * 1e3, double(batch * world) / step_s);

  if (group) {
    for (int mib : sizes) {
      Tensor buf = ones({int64_t(mib) << 18});
      std::vector<double> t;
      const int reps = mib >= 16 ? 5 : 10;
      for (int i = 0; i < reps + 2; ++i) {
        group->barrier();
        auto t0 = Clock::now();
        group->all_reduce(buf);
        if (i >= 2) t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      }
      const double sec = median(t);
      if (rank == 0)
        fmt::print("{{\"what\": \"allreduce\", \"ranks\": {}, \"mib\": {}, \"ms\": {:.3f}, \"gb_per_s\": {:.3f}}}\n",
                   world, mib, sec * 1e3, double(int64_t(mib) << 20) / sec / 1e9);
    }
  }
  return 0;
}
