// Process groups and data parallelism across real processes on loopback. Each TEST in
// "DistributedTest" starts the ranks as copies of this binary running one test of
// "RankWorker" (which skips itself unless SKIFF_TEST_WORKER is set), waits for them with
// a deadline, and checks their exit codes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "framework/distributed/data_parallel.h"
#include "framework/distributed/process_group.h"
#include "framework/distributed/zero.h"
#include "framework/core/error.h"
#include "framework/data/dataloader.h"
#include "framework/nn/linear.h"
#include "framework/nn/containers.h"
#include "framework/autograd/engine.h"
#include "framework/ops/ops.h"
#include "framework/optim/optimizers.h"

using namespace skiff;
using namespace skiff::distributed;

namespace {

int free_port() {
  // Ports from the pid keep parallel ctest runs apart; bind() in the rank finds clashes.
  return 20000 + int(getpid() % 20000) + int(std::rand() % 1000);
}

// Starts `n` ranks running RankWorker.<worker>; returns their exit codes (-1: killed
// by the deadline). Extra environment applies to every rank, or to one rank with
// "R:NAME=VALUE".
std::vector<int> run_ranks(int n, const std::string& worker, std::vector<std::string> env = {},
                           std::chrono::seconds deadline = std::chrono::seconds(60), int start_ranks = -1) {
  const int port = free_port();
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<pid_t> pids;
  if (start_ranks < 0) start_ranks = n;
  for (int r = 0; r < start_ranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      setenv("SKIFF_TEST_WORKER", "1", 1);
      setenv("SKIFF_RANK", std::to_string(r).c_str(), 1);
      setenv("SKIFF_WORLD_SIZE", std::to_string(n).c_str(), 1);
      setenv("SKIFF_MASTER_ADDR", "127.0.0.1", 1);
      setenv("SKIFF_MASTER_PORT", std::to_string(port).c_str(), 1);
      setenv("SKIFF_NUM_THREADS", "1", 1);
      for (const auto& e : env) {
        std::string kv = e;
        if (kv.size() > 2 && kv[1] == ':') {
          if (kv[0] - '0' != r) continue;
          kv = kv.substr(2);
        }
        auto eq = kv.find('=');
        setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
      }
      std::string filter = "--gtest_filter=RankWorker." + worker;
      execl(self.c_str(), self.c_str(), filter.c_str(), "--gtest_brief=1", static_cast<char*>(nullptr));
      _exit(127);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes(pids.size(), -2);
  const auto end = std::chrono::steady_clock::now() + deadline;
  size_t left = pids.size();
  while (left > 0) {
    for (size_t i = 0; i < pids.size(); ++i) {
      if (codes[i] != -2) continue;
      int status = 0;
      if (waitpid(pids[i], &status, WNOHANG) == pids[i]) {
        codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        --left;
      }
    }
    if (left && std::chrono::steady_clock::now() > end) {
      for (size_t i = 0; i < pids.size(); ++i)
        if (codes[i] == -2) {
          kill(pids[i], SIGKILL);
          waitpid(pids[i], nullptr, 0);
          codes[i] = -1;
        }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return codes;
}

float max_abs_diff(const Tensor& a, const Tensor& b) {
  auto x = a.to_vector<float>(), y = b.to_vector<float>();
  float m = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float d = std::abs(x[i] - y[i]);
    if (!(d <= m)) m = std::isnan(d) ? INFINITY : d;  // NaN counts as the largest difference
  }
  return m;
}

bool is_worker() { return std::getenv("SKIFF_TEST_WORKER") != nullptr; }

std::shared_ptr<ProcessGroup> join() {
  auto o = options_from_env();
  EXPECT_TRUE(o.has_value());
  return ProcessGroup::init(*o);
}

}  // namespace

// ---- what each rank runs ----------------------------------------------------------

TEST(RankWorker, Collectives) {
  if (!is_worker()) GTEST_SKIP() << "runs as a rank of DistributedTest";
  auto g = join();
  const int r = g->rank(), n = g->size();
  Tensor x = from_vector<float>({float(r), float(10 * r + 1)});
  g->all_reduce(x, ReduceOp::Sum);
  const float s = float(n * (n - 1) / 2);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{s, 10 * s + float(n)}));
  Tensor a = from_vector<double>({double(r)});
  g->all_reduce(a, ReduceOp::Avg);
  EXPECT_DOUBLE_EQ(a.item<double>(), double(n - 1) / 2);
  Tensor m = from_vector<int64_t>({int64_t(r), -int64_t(r)});
  g->all_reduce(m, ReduceOp::Max);
  EXPECT_EQ(m.to_vector<int64_t>(), (std::vector<int64_t>{n - 1, 0}));
  Tensor mn = from_vector<int32_t>({int32_t(r + 5)});
  g->all_reduce(mn, ReduceOp::Min);
  EXPECT_EQ(mn.item<int32_t>(), 5);

  Tensor b = r == 1 ? from_vector<float>({7, 8, 9}) : zeros({3});
  g->broadcast(b, 1);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{7, 8, 9}));

  Tensor gathered = g->all_gather(full({2}, double(r), DType::Float32));
  EXPECT_EQ(gathered.shape(), (Shape{n, 2}));
  for (int k = 0; k < n; ++k) EXPECT_EQ(gathered.to_vector<float>()[size_t(2 * k)], float(k));

  // reduce_scatter: every rank contributes arange(2n) + r; rank r keeps rows 2r, 2r+1.
  std::vector<float> v;
  for (int k = 0; k < 2 * n; ++k) v.push_back(float(k + r));
  Tensor part = g->reduce_scatter(from_vector<float>(v), ReduceOp::Sum);
  EXPECT_EQ(part.to_vector<float>(), (std::vector<float>{float(n * 2 * r) + s, float(n * (2 * r + 1)) + s}));
  EXPECT_THROW(g->reduce_scatter(zeros({2 * n + 1})), ShapeError);

  // A ring of send/recv.
  Tensor out = full({4}, double(r), DType::Float32), in = zeros({4});
  if (r % 2 == 0) {
    g->send(out, (r + 1) % n);
    g->recv(in, (r + n - 1) % n);
  } else {
    g->recv(in, (r + n - 1) % n);
    g->send(out, (r + 1) % n);
  }
  EXPECT_EQ(in.to_vector<float>()[0], float((r + n - 1) % n));

  // A sub-group of the even ranks.
  std::vector<int> evens;
  for (int k = 0; k < n; k += 2) evens.push_back(k);
  auto sub = g->new_group(evens);
  EXPECT_EQ(sub != nullptr, r % 2 == 0);
  if (sub) {
    Tensor e = from_vector<float>({float(r)});
    sub->all_reduce(e);
    float want = 0;
    for (int k : evens) want += float(k);
    EXPECT_EQ(e.item<float>(), want);
    EXPECT_EQ(sub->rank(), r / 2);
  }
  g->barrier();
  EXPECT_THROW(g->new_group({0, 0}), ValueError);
}

// Rank 1 dies after joining; rank 0's next collective must fail fast, not hang.
TEST(RankWorker, PeerDies) {
  if (!is_worker()) GTEST_SKIP() << "runs as a rank of DistributedTest";
  auto g = join();
  Tensor x = ones({1 << 16});
  auto t0 = std::chrono::steady_clock::now();
  try {
    g->barrier();
    if (g->rank() == 1) std::_Exit(9);
    for (int i = 0; i < 100; ++i) g->all_reduce(x);
    ADD_FAILURE() << "all_reduce with a dead peer did not fail";
  } catch (const DistributedError& e) {
    EXPECT_NE(std::string(e.what()).find("failed"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

// Rank 1 stays silent longer than the timeout (SKIFF_DIST_TIMEOUT=2).
TEST(RankWorker, SilentPeerTimesOut) {
  if (!is_worker()) GTEST_SKIP() << "runs as a rank of DistributedTest";
  auto g = join();
  if (g->rank() == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(6));
    std::_Exit(0);
  }
  Tensor x = ones({4});
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(g->all_reduce(x), DistributedError);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

// Only rank 0 of 2 starts: joining fails after the timeout, naming what is missing.
TEST(RankWorker, MissingRank) {
  if (!is_worker()) GTEST_SKIP() << "runs as a rank of DistributedTest";
  auto o = options_from_env();
  ASSERT_TRUE(o);
  try {
    ProcessGroup::init(*o);
    ADD_FAILURE() << "joining without the other rank did not fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
}

// N ranks with batch B take the same steps as one process with batch N*B: every rank
// trains through DataParallel on its shard and, alongside, a local copy of the model on
// the whole global batch; the weights must agree after each step.
TEST(RankWorker, DataParallelMatchesOneProcessWithTheWholeBatch) {
  if (!is_worker()) GTEST_SKIP() << "runs as a rank of DistributedTest";
  auto g = join();
  const int n = g->size();
  constexpr int64_t B = 3, steps = 4;
  static constexpr int64_t features = 5;
  auto make = [] {
    manual_seed(42);
    auto net = std::make_shared<nn::Sequential>();
    net->push_back(std::make_shared<nn::Linear>(features, 16));
    net->push_back(std::make_shared<nn::Linear>(16, 3));
    return net;
  };
  auto model = make(), reference = make();
  // Different start weights on the other ranks: DataParallel must broadcast rank 0's.
  if (g->rank() != 0) {
    NoGradGuard ng;
    for (Tensor p : model->parameters()) mul_(p, 3.0);
  }
  DataParallel ddp(*model, g, /*bucket_bytes=*/256);  // small buckets: several all-reduces per step
  EXPECT_GT(ddp.num_buckets(), 1);
  optim::SGD opt(model->parameters(), {.lr = 0.1, .momentum = 0.9});
  optim::SGD ref_opt(reference->parameters(), {.lr = 0.1, .momentum = 0.9});
  Generator gen(7);
  Tensor data = randn({steps * n * B, features}, DType::Float32, &gen);
  Tensor target = randn({steps * n * B, 3}, DType::Float32, &gen);
  for (int64_t step = 0; step < steps; ++step) {
    const int64_t base = step * n * B;
    // This rank's shard of the global batch: rows base + rank, base + rank + n, ...
    std::vector<int64_t> rows;
    for (int64_t k = 0; k < B; ++k) rows.push_back(base + g->rank() + k * n);
    Tensor idx = from_vector<int64_t>(rows);
    opt.zero_grad();
    Tensor loss = mean(square(sub((*model)(index_select(data, 0, idx)), index_select(target, 0, idx))));
    backward(loss);
    ddp.finish_gradient_sync();
    opt.step();

    ref_opt.zero_grad();
    Tensor whole = narrow(data, 0, base, n * B), whole_t = narrow(target, 0, base, n * B);
    backward(mean(square(sub((*reference)(whole), whole_t))));
    ref_opt.step();

    auto a = model->parameters(), b = reference->parameters();
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_LT(max_abs_diff(a[i], b[i]), 1e-5f) << "step " << step << " parameter " << i;
  }
}

// ZeRO stage 1 takes the steps of plain data parallelism with each rank holding the Adam
// state of its share of the parameters only; gather_state() gives rank 0 the whole state.
TEST(RankWorker, ZeroMatchesDataParallelWithAShareOfTheState) {
  if (!is_worker()) GTEST_SKIP() << "runs as a rank of DistributedTest";
  auto g = join();
  const int n = g->size();
  auto make = [] {
    manual_seed(3);
    auto net = std::make_shared<nn::Sequential>();  // four equal layers: shares can be even
    for (int k = 0; k < 4; ++k) net->push_back(std::make_shared<nn::Linear>(16, 16));
    return net;
  };
  auto sharded = make(), plain = make();
  DataParallel ddp_a(*sharded, g), ddp_b(*plain, g);
  optim::Adam opt_a(sharded->parameters(), {.lr = 0.01}), opt_b(plain->parameters(), {.lr = 0.01});
  ZeroRedundancy zero(opt_a, g);
  Generator gen(uint64_t(11 + g->rank()));
  for (int step = 0; step < 5; ++step) {
    Tensor x = randn({4, 16}, DType::Float32, &gen), y = randn({4, 16}, DType::Float32, &gen);
    opt_a.zero_grad();
    backward(mean(square(sub((*sharded)(x), y))));
    ddp_a.finish_gradient_sync();
    zero.before_step();
    opt_a.step();
    zero.after_step();
    opt_b.zero_grad();
    backward(mean(square(sub((*plain)(x), y))));
    ddp_b.finish_gradient_sync();
    opt_b.step();
  }
  auto a = sharded->parameters(), b = plain->parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(max_abs_diff(a[i], b[i]), 0.0f) << "parameter " << i;
  // This rank's Adam state covers only the parameters it owns, about 1/n of the bytes.
  int64_t full = 0;
  for (const Tensor& p : plain->parameters()) full += 2 * p.nbytes();
  EXPECT_LT(zero.state_bytes(), full * 3 / (2 * n)) << "holds " << zero.state_bytes() << " of " << full;
  EXPECT_GT(zero.state_bytes(), 0);
  auto gathered = zero.gather_state();
  if (g->rank() == 0) {
    auto want = opt_b.state_dict();
    ASSERT_EQ(gathered.tensors.size(), want.tensors.size());
    for (const auto& [k, t] : want.tensors) {
      ASSERT_TRUE(gathered.tensors.count(k)) << k;
      EXPECT_EQ(max_abs_diff(gathered.tensors.at(k), t), 0.0f) << k;
    }
    EXPECT_EQ(gathered.scalars, want.scalars);
  }
  // After loading a whole state (a checkpoint), foreign parameters' state is freed again.
  opt_a.load_state_dict(opt_b.state_dict());
  zero.drop_foreign_state();
  EXPECT_LT(zero.state_bytes(), full * 3 / (2 * n));
}

// ---- the tests ctest runs ------------------------------------------------------------

TEST(DistributedTest, CollectivesOnTwoAndFourRanks) {
  if (is_worker()) GTEST_SKIP();
  for (int n : {2, 4}) {
    auto codes = run_ranks(n, "Collectives");
    for (int r = 0; r < n; ++r) EXPECT_EQ(codes[size_t(r)], 0) << n << " ranks: rank " << r;
  }
}

// Gloo's file store instead of rank 0's HTTP store (SKIFF_STORE_DIR).
TEST(DistributedTest, CollectivesWithAFileStore) {
  if (is_worker()) GTEST_SKIP();
  auto dir = std::filesystem::temp_directory_path() / ("skiff_store_" + std::to_string(getpid()));
  auto codes = run_ranks(2, "Collectives", {"SKIFF_STORE_DIR=" + dir.string(), "SKIFF_MASTER_PORT=1"});
  std::filesystem::remove_all(dir);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(codes[size_t(r)], 0) << "rank " << r;
}

TEST(DistributedTest, ADeadPeerIsAnErrorNotAHang) {
  if (is_worker()) GTEST_SKIP();
  auto codes = run_ranks(2, "PeerDies", {"SKIFF_DIST_TIMEOUT=60"}, std::chrono::seconds(40));
  EXPECT_EQ(codes[0], 0);  // rank 0's worker passed: it caught DistributedError in time
  EXPECT_EQ(codes[1], 9);
}

TEST(DistributedTest, ASilentPeerTimesOut) {
  if (is_worker()) GTEST_SKIP();
  auto codes = run_ranks(2, "SilentPeerTimesOut", {"SKIFF_DIST_TIMEOUT=2"}, std::chrono::seconds(40));
  EXPECT_EQ(codes[0], 0);
}

TEST(DistributedTest, AMissingRankTimesOutWhileJoining) {
  if (is_worker()) GTEST_SKIP();
  auto codes = run_ranks(2, "MissingRank", {"SKIFF_DIST_TIMEOUT=2"}, std::chrono::seconds(30), /*start_ranks=*/1);
  EXPECT_EQ(codes[0], 0);
}

TEST(DistributedTest, DataParallelEqualsOneProcessWithTheWholeBatch) {
  if (is_worker()) GTEST_SKIP();
  for (int n : {2, 4}) {
    auto codes = run_ranks(n, "DataParallelMatchesOneProcessWithTheWholeBatch");
    for (int r = 0; r < n; ++r) EXPECT_EQ(codes[size_t(r)], 0) << n << " ranks: rank " << r;
  }
}

TEST(DistributedTest, ZeroStageOneMatchesDataParallel) {
  if (is_worker()) GTEST_SKIP();
  for (int n : {2, 4}) {
    auto codes = run_ranks(n, "ZeroMatchesDataParallelWithAShareOfTheState");
    for (int r = 0; r < n; ++r) EXPECT_EQ(codes[size_t(r)], 0) << n << " ranks: rank " << r;
  }
}

TEST(DistributedTest, OptionsFromTheEnvironmentAreChecked) {
  if (is_worker()) GTEST_SKIP();
  unsetenv("SKIFF_WORLD_SIZE");
  EXPECT_FALSE(options_from_env().has_value());
  setenv("SKIFF_WORLD_SIZE", "2", 1);
  unsetenv("SKIFF_RANK");
  EXPECT_THROW(options_from_env(), ValueError);
  setenv("SKIFF_RANK", "2", 1);
  EXPECT_THROW(options_from_env(), ValueError);  // rank out of range
  setenv("SKIFF_RANK", "1", 1);
  setenv("SKIFF_MASTER_PORT", "port", 1);
  EXPECT_THROW(options_from_env(), ValueError);
  unsetenv("SKIFF_MASTER_PORT");
  auto o = options_from_env();
  ASSERT_TRUE(o);
  EXPECT_EQ(o->rank, 1);
  EXPECT_EQ(o->world_size, 2);
  unsetenv("SKIFF_WORLD_SIZE");
  unsetenv("SKIFF_RANK");
}
