// Tests of framework/io/checkpoint.h: round trip, rotation, and crash safety.
#include "framework/io/checkpoint.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <filesystem>
#include <thread>

#include "framework/core/rng.h"
#include "framework/io/file.h"

namespace skiff::io {
namespace {
namespace fs = std::filesystem;

struct TempDir {
  TempDir() {
    path = fs::temp_directory_path() / ("skiff_ckpt_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
  static inline int n = 0;
};

Checkpoint make_ckpt(int64_t step, double acc) {
  Checkpoint c;
  c.step = step;
  c.model["fc.weight"] = full(Shape{4, 3}, double(step));
  c.model["bn.running_mean"] = zeros(Shape{4}, DType::Float64);
  c.optimizer["state.0.exp_avg"] = full(Shape{4, 3}, 0.5 * step);
  c.optimizer["state.0.step"] = scalar_tensor(double(step), DType::Int64);
  c.extra["ema.fc.weight"] = ones(Shape{4, 3});
  c.optimizer_state = R"({"lr":0.1,"betas":[0.9,0.999]})";
  c.scheduler_state = R"({"last_epoch":)" + std::to_string(step) + "}";
  Generator g(1234);
  for (int i = 0; i < 5; ++i) g.next_u64();
  c.rng["default"] = g.state();
  c.metrics["val_acc"] = acc;
  c.metadata["config"] = "configs/x.yaml";
  return c;
}

TEST(CheckpointTest, RoundTripsEveryPart) {
  TempDir d;
  Checkpoint c = make_ckpt(17, 0.9);
  save_checkpoint(d.path / "c.safetensors", c);
  Checkpoint r = load_checkpoint(d.path / "c.safetensors");
  EXPECT_EQ(r.step, 17);
  EXPECT_EQ(r.model.size(), 2u);
  EXPECT_EQ(r.model.at("fc.weight").to_vector<float>(), std::vector<float>(12, 17.f));
  EXPECT_EQ(r.model.at("bn.running_mean").dtype(), DType::Float64);
  EXPECT_EQ(r.optimizer.at("state.0.step").item<int64_t>(), 17);
  EXPECT_EQ(r.extra.at("ema.fc.weight").to_vector<float>(), std::vector<float>(12, 1.f));
  EXPECT_EQ(r.optimizer_state, c.optimizer_state);
  EXPECT_EQ(r.scheduler_state, c.scheduler_state);
  EXPECT_EQ(r.metrics.at("val_acc"), 0.9);
  EXPECT_EQ(r.metadata.at("config"), "configs/x.yaml");
  // The restored generator continues exactly where the saved one was.
  Generator a(1234), b;
  for (int i = 0; i < 5; ++i) a.next_u64();
  b.set_state(r.rng.at("default"));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.next_u64(), b.next_u64());
  // It is an ordinary safetensors file.
  auto f = load_safetensors(d.path / "c.safetensors");
  EXPECT_TRUE(f.tensors.count("model/fc.weight"));
  EXPECT_EQ(f.metadata.at("skiff.format"), "skiff.checkpoint.v1");
}

TEST(CheckpointTest, RejectsPlainSafetensorsFile) {
  TempDir d;
  save_safetensors(d.path / "w.safetensors", {{"w", ones(Shape{2})}});
  try {
    load_checkpoint(d.path / "w.safetensors");
    ADD_FAILURE();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("not a skiff checkpoint"), std::string::npos);
  }
}

TEST(CheckpointManagerTest, KeepsLastNAndBest) {
  TempDir d;
  CheckpointManager m(d.path, {.keep_last = 2, .keep_best = 1, .metric = "val_acc"});
  EXPECT_FALSE(m.latest());
  const double acc[] = {0.5, 0.9, 0.6, 0.7, 0.65};
  for (int i = 0; i < 5; ++i) m.save(make_ckpt((i + 1) * 100, acc[i]));
  auto files = m.list();
  ASSERT_EQ(files.size(), 3u);  // best (step 200) + last two (400, 500)
  EXPECT_EQ(m.step_of(files[0]), 200);
  EXPECT_EQ(m.step_of(files[1]), 400);
  EXPECT_EQ(m.step_of(files[2]), 500);
  EXPECT_EQ(m.step_of(*m.latest()), 500);
  EXPECT_EQ(m.step_of(*m.best()), 200);
  EXPECT_EQ(load_checkpoint(*m.latest()).step, 500);
  EXPECT_EQ(files[0].filename(), "ckpt-0000000200.safetensors");

  // Lower-is-better metric; missing metric is an error.
  TempDir d2;
  CheckpointManager loss(d2.path, {.keep_last = 1, .keep_best = 1, .metric = "val_acc", .higher_is_better = false});
  for (int i = 0; i < 5; ++i) loss.save(make_ckpt(i, acc[i]));
  EXPECT_EQ(loss.step_of(*loss.best()), 0);
  EXPECT_EQ(loss.list().size(), 2u);
  Checkpoint no_metric = make_ckpt(9, 0);
  no_metric.metrics.clear();
  EXPECT_THROW(loss.save(no_metric), ValueError);
  EXPECT_THROW(CheckpointManager(d2.path, {.keep_best = 1}), ValueError);
}

TEST(CheckpointManagerTest, LatestSkipsDamagedFilesAndStaleTempsAreCleaned) {
  TempDir d;
  {
    CheckpointManager m(d.path, {.keep_last = 0});
    m.save(make_ckpt(1, 0));
    m.save(make_ckpt(2, 0));
  }
  // A damaged newest file (e.g. disk error) and a temp file left by a killed writer.
  write_file_atomic(d.path / "ckpt-0000000003.safetensors", "garbage");
  { std::ofstream(d.path / ".ckpt-0000000004.safetensors.tmp.abc123") << "partial"; }
  CheckpointManager m(d.path, {.keep_last = 0});
  EXPECT_FALSE(fs::exists(d.path / ".ckpt-0000000004.safetensors.tmp.abc123"));
  EXPECT_EQ(m.step_of(*m.latest()), 2);
}

// A writer killed with SIGKILL at a random moment leaves the old complete file or
// the new complete file under the final name, never a partial one.
TEST(CheckpointTest, SigkillDuringSaveLeavesACompleteFile) {
  TempDir d;
  fs::path p = d.path / "big.safetensors";
  const Shape big{4 << 20};  // 16 MiB of float32 per checkpoint
  {
    Checkpoint c;
    c.step = 0;
    c.model["w"] = full(big, 0.0);
    save_checkpoint(p, c);
  }
  for (int round = 0; round < 4; ++round) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Child: keep rewriting the checkpoint with a new step, the data matching the step.
      for (int64_t step = 1;; ++step) {
        Checkpoint c;
        c.step = step;
        c.model["w"] = full(big, double(step));
        save_checkpoint(p, c);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(40 + 37 * round));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));
    Checkpoint r = load_checkpoint(p);
    const Tensor& w = r.model.at("w");
    ASSERT_EQ(w.numel(), big.numel());
    const float* data = w.data<float>();
    // Spot-check the whole range: every element must equal the recorded step.
    for (int64_t i = 0; i < w.numel(); i += 4093) ASSERT_EQ(data[i], float(r.step)) << "round " << round;
    ASSERT_EQ(data[w.numel() - 1], float(r.step));
    // Only hidden temporaries may remain besides the final file.
    for (const auto& e : fs::directory_iterator(d.path)) {
      std::string n = e.path().filename().string();
      EXPECT_TRUE(n == "big.safetensors" || is_atomic_temp_name(n)) << n;
    }
  }
}

}  // namespace
}  // namespace skiff::io
