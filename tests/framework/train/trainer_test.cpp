// The Trainer on a small regression task: it learns, writes its records
// (train.log, metrics.jsonl, TensorBoard events, curves.png, weights),
// resumes exactly (after a stop and after Ctrl-C), and runs with EMA and clipping.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "framework/core/rng.h"
#include "framework/io/checkpoint.h"
#include "framework/io/safetensors.h"
#include "framework/nn/nn.h"
#include "framework/ops/ops.h"
#include "framework/optim/clip_grad.h"
#include "framework/optim/optimizers.h"
#include "framework/config/config.h"
#include "framework/train/event_file.h"
#include "framework/train/recipe.h"
#include "framework/train/trainer.h"

namespace skiff::train {
namespace {

namespace fs = std::filesystem;

// y = x W* + noise, a two-layer net with dropout (so the default generator's state matters).
struct Regression : TrainTask {
  std::shared_ptr<nn::Sequential> net;
  data::Example eval_set;
  int64_t calls = 0;
  int64_t interrupt_at = -1;  // raise SIGINT inside this call of loss()

  Regression() {
    Generator g(3);
    net = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
        std::make_shared<nn::Linear>(4, 16, true, &g), std::make_shared<nn::ReLU>(),
        std::make_shared<nn::Dropout>(0.1), std::make_shared<nn::Linear>(16, 1, true, &g)});
    eval_set = make_data(64, 99);
  }
  static data::Example make_data(int64_t n, uint64_t seed) {
    Generator g(seed);
    Tensor x = randn({n, 4}, DType::Float32, &g);
    Tensor w = from_vector(std::vector<float>{1.0f, -2.0f, 0.5f, 3.0f}, Shape{4, 1});
    return {{"x", x}, {"y", matmul(x, w)}};
  }
  nn::Module& model() override { return *net; }
  Tensor loss(const data::Example& b) override {
    if (++calls == interrupt_at) std::raise(SIGINT);
    return mse_loss(net->forward(b.at("x")), b.at("y"));
  }
  std::map<std::string, double> evaluate() override {
    return {{"mse", mse_loss(net->forward(eval_set.at("x")), eval_set.at("y")).item<double>()}};
  }
};

struct RunSetup {
  Regression task;
  std::shared_ptr<data::TensorDataset> set = std::make_shared<data::TensorDataset>(Regression::make_data(96, 5));
  data::DataLoader loader{set, {.batch_size = 8, .shuffle = true, .seed = 7}};
  optim::Adam opt{task.net->parameters(), {.lr = 0.05}};
  optim::StepLR sched{opt, 30, 0.5};

  FitResult fit(TrainerOptions o, std::optional<fs::path> resume = std::nullopt) {
    if (!resume) manual_seed(42);  // as a recipe's Global.seed; a resumed run restores the generator
    Trainer t(task, opt, &sched, loader, std::move(o));
    return t.fit(resume);
  }
};

class TrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("skiff_trainer_{}_{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  TrainerOptions options(const std::string& name) {
    return {.output_dir = dir_ / name, .epochs = 3, .log_every = 4, .eval_every = 12, .metric = "mse",
            .higher_is_better = false, .quiet = true};
  }
  fs::path dir_;
};

std::vector<std::string> lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

bool same_weights(nn::Module& a, nn::Module& b) {
  auto sa = a.state_dict(), sb = b.state_dict();
  for (auto& [k, v] : sa)
    if (amax(abs(sub(v, sb.at(k)))).item<double>() != 0) return false;
  return true;
}

TEST(EventFile, Crc32cMatchesTheStandardCheckValue) { EXPECT_EQ(crc32c("123456789"), 0xe3069283u); }

TEST_F(TrainerTest, LearnsAndWritesItsRecords) {
  RunSetup run;
  double before = run.task.evaluate().at("mse");
  FitResult r = run.fit(options("a"));
  EXPECT_EQ(r.steps, 36);  // 3 epochs x 12 batches
  EXPECT_FALSE(r.interrupted);
  ASSERT_TRUE(r.best.count("mse"));
  EXPECT_LT(r.best.at("mse"), before * 0.2) << "before " << before;
  EXPECT_EQ(r.best_step % 12, 0);

  fs::path out = dir_ / "a";
  for (const char* f : {"train.log", "metrics.jsonl", "best_model.safetensors", "latest_model.safetensors", "curves.png"})
    EXPECT_TRUE(fs::exists(out / f)) << f;
  // metrics.jsonl: 9 logged steps (every 4) and 3 evaluations (every 12).
  int logged = 0, evals = 0;
  for (const auto& l : lines(out / "metrics.jsonl")) {
    auto j = nlohmann::json::parse(l);
    if (j.contains("eval")) {
      ++evals;
      EXPECT_TRUE(j["eval"].contains("mse"));
    }
    if (j.contains("loss")) {
      ++logged;
      EXPECT_GT(j["lr"].get<double>(), 0);
    }
  }
  EXPECT_EQ(logged, 9);
  EXPECT_EQ(evals, 3);
  // The TensorBoard file holds the same scalars.
  fs::path events;
  for (auto& e : fs::directory_iterator(out))
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) events = e.path();
  ASSERT_FALSE(events.empty());
  auto scalars = read_scalar_events(events);
  int losses = 0, eval_mse = 0;
  for (auto& s : scalars) losses += s.tag == "train/loss", eval_mse += s.tag == "eval/mse";
  EXPECT_EQ(losses, 9);
  EXPECT_EQ(eval_mse, 3);
  EXPECT_EQ(scalars.back().step, 36);
  // The best weights load into a fresh model and give the best metric.
  Regression fresh;
  load_weights(*fresh.net, out / "best_model.safetensors");
  fresh.net->eval();
  EXPECT_NEAR(fresh.evaluate().at("mse"), r.best.at("mse"), 1e-6);
  // Checkpoints rotate: the last two kept.
  EXPECT_EQ(io::CheckpointManager(out / "checkpoints").list().size(), 2u);
  EXPECT_TRUE(latest_checkpoint(out).has_value());
}

TEST_F(TrainerTest, ResumeContinuesExactly) {
  RunSetup full;
  full.fit(options("full"));

  RunSetup first;
  TrainerOptions o = options("split");
  o.max_steps = 17;  // stops mid-epoch
  EXPECT_EQ(first.fit(o).steps, 17);
  auto ckpt = latest_checkpoint(dir_ / "split");
  ASSERT_TRUE(ckpt);
  RunSetup second;  // a new process: fresh model, optimizer and generator
  manual_seed(12345);
  FitResult r = second.fit(options("split"), *ckpt);
  EXPECT_EQ(r.steps, 36);
  EXPECT_TRUE(same_weights(*second.task.net, *full.task.net));
}

TEST_F(TrainerTest, CtrlCSavesACheckpointAndResumes) {
  RunSetup full;
  full.fit(options("full"));
  RunSetup first;
  first.task.interrupt_at = 20;
  FitResult r = first.fit(options("int"));
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.steps, 20);
  ASSERT_TRUE(fs::exists(r.last_checkpoint));
  RunSetup second;
  EXPECT_EQ(second.fit(options("int"), r.last_checkpoint).steps, 36);
  EXPECT_TRUE(same_weights(*second.task.net, *full.task.net));
}

// A run with EMA (and clipping) stopped mid-epoch and resumed in a fresh process ends with
// the same EMA weights (latest_model.safetensors) and the same raw weights as the
// uninterrupted run; the EMA weights differ from the raw ones (the average is real).
TEST_F(TrainerTest, EmaAndClippingRunAndResume) {
  TrainerOptions o = options("ema");
  o.ema_decay = 0.9;
  o.clip_norm = 0.5;
  RunSetup full;
  FitResult r = full.fit(o);
  EXPECT_EQ(r.steps, 36);
  EXPECT_LT(r.best.at("mse"), 1.0);
  io::Checkpoint c = io::load_checkpoint(*latest_checkpoint(dir_ / "ema"));
  EXPECT_TRUE(c.metadata.count("ema"));
  EXPECT_FALSE(c.extra.empty());
  auto full_ema = io::load_safetensors(dir_ / "ema" / "latest_model.safetensors").tensors;
  auto raw = full.task.net->state_dict();
  ASSERT_EQ(full_ema.size(), raw.size());
  double ema_vs_raw = 0;
  for (auto& [k, v] : raw) ema_vs_raw = std::max(ema_vs_raw, amax(abs(sub(v, full_ema.at(k)))).item<double>());
  EXPECT_GT(ema_vs_raw, 1e-4) << "latest_model.safetensors holds the raw weights, not their average";

  TrainerOptions split = o;
  split.output_dir = dir_ / "ema_split";
  split.max_steps = 17;  // stops mid-epoch, between two evaluations
  RunSetup first;
  EXPECT_EQ(first.fit(split).steps, 17);
  auto ckpt = latest_checkpoint(dir_ / "ema_split");
  ASSERT_TRUE(ckpt);
  RunSetup second;  // a new process: fresh model, optimizer, EMA and generator
  manual_seed(12345);
  split.max_steps = 0;
  EXPECT_EQ(second.fit(split, *ckpt).steps, 36);
  EXPECT_TRUE(same_weights(*second.task.net, *full.task.net));
  auto resumed_ema = io::load_safetensors(dir_ / "ema_split" / "latest_model.safetensors").tensors;
  ASSERT_EQ(resumed_ema.size(), full_ema.size());
  for (auto& [k, v] : full_ema)
    EXPECT_EQ(amax(abs(sub(resumed_ema.at(k), v))).item<double>(), 0.0) << "EMA weight " << k << " after resume";

  // A recipe with EMA cannot resume a run saved without it.
  RunSetup plain;
  plain.fit(options("plain"));
  RunSetup again;
  EXPECT_THROW(again.fit(o, *latest_checkpoint(dir_ / "plain")), ValueError);
}

// Plain SGD that records the global L2 norm of the gradients it steps with.
class RecordingSGD : public optim::SGD {
 public:
  using optim::SGD::SGD;
  double step(const optim::Closure& closure = nullptr) override {
    std::vector<Tensor> params;
    for (auto& g : param_groups())
      for (auto& p : g.params) params.push_back(p);
    norms.push_back(optim::grad_norm(params));
    return optim::SGD::step(closure);
  }
  std::vector<double> norms;
};

// Clipping acts: with clip_norm every step's gradient norm is at most clip_norm (and equal
// to it when the raw norm is larger, as it is here on every step), so the weights end
// elsewhere than without clipping and move at most steps x lr x clip_norm in all.
TEST_F(TrainerTest, ClippingBoundsEveryStepsGradientNorm) {
  constexpr double kLr = 0.05, kClip = 0.01;
  auto run = [&](const std::string& name, double clip, std::vector<double>* norms) {
    Regression task;
    auto set = std::make_shared<data::TensorDataset>(Regression::make_data(96, 5));
    data::DataLoader loader{set, {.batch_size = 8, .shuffle = true, .seed = 7}};
    RecordingSGD opt(task.net->parameters(), {.lr = kLr});
    TrainerOptions o = options(name);
    o.clip_norm = clip;
    manual_seed(42);
    auto initial = task.net->state_dict();
    for (auto& [k, v] : initial) v = clone(v);
    EXPECT_EQ(Trainer(task, opt, nullptr, loader, o).fit().steps, 36);
    *norms = opt.norms;
    double moved_sq = 0;
    auto now = task.net->state_dict();
    for (auto& [k, v] : now) moved_sq += sum(square(to(sub(v, initial.at(k)), DType::Float64))).item<double>();
    return std::make_pair(now, std::sqrt(moved_sq));
  };
  std::vector<double> raw, clipped;
  auto [free_w, free_moved] = run("free", 0, &raw);
  auto [clip_w, clip_moved] = run("clipped", kClip, &clipped);
  ASSERT_EQ(raw.size(), 36u);
  ASSERT_EQ(clipped.size(), 36u);
  // Same initial weights, batch and dropout draws: the first clipped step saw raw[0] before clipping.
  EXPECT_GT(raw[0], 10 * kClip) << "the task's gradients are too small to clip";
  for (size_t i = 0; i < clipped.size(); ++i) {
    EXPECT_LE(clipped[i], kClip) << "step " << i + 1;
    EXPECT_GT(clipped[i], kClip * (1 - 1e-4)) << "step " << i + 1;
  }
  EXPECT_LE(clip_moved, 36 * kLr * kClip * (1 + 1e-6));
  EXPECT_GT(clip_moved, 0.0);
  EXPECT_GT(free_moved, 10 * clip_moved);
  double diff = 0;
  for (auto& [k, v] : free_w) diff = std::max(diff, amax(abs(sub(v, clip_w.at(k)))).item<double>());
  EXPECT_GT(diff, 1e-3) << "clipping did not change the weights";
}

TEST_F(TrainerTest, RejectsBadSettings) {
  RunSetup run;
  TrainerOptions o = options("bad");
  o.epochs = 0;
  EXPECT_THROW(Trainer(run.task, run.opt, nullptr, run.loader, o), ValueError);
  o = options("bad");
  o.metric = "accuracy";
  EXPECT_THROW(run.fit(o), ValueError);
}

// The Optimizer section: schedules per iteration with warm-up, the regularizer, errors.
TEST(RecipeOptimizer, SchedulesWarmUpAndValidate) {
  auto section = [](const std::string& yaml) {
    fs::path f = fs::temp_directory_path() / fmt::format("skiff_opt_{}.yml", ::getpid());
    std::ofstream(f) << yaml;
    config::Section root(config::load_config(f.string()), "", f.string());
    config::validate(root, config::Schema{{optimizer_key()}});
    fs::remove(f);
    return root.section("Optimizer");
  };
  Tensor w = zeros({2}, DType::Float32);
  w.set_requires_grad(true);
  auto lr_after = [&](OptimizerSetup& s, int steps) {
    for (int i = 0; i < steps; ++i) s.scheduler->step();
    return s.optimizer->param_groups()[0].get("lr");
  };
  // Cosine, 2 epochs x 10 steps, warm-up 0.5 epoch (5 steps): 0 -> 0.01 at step 5 -> 0 at step 20.
  auto cos = section("Optimizer: {name: Adam, lr: {name: Cosine, learning_rate: 0.01, warmup_epoch: 0.5},"
                     " regularizer: {name: L2, factor: 0.001}}\n");
  OptimizerSetup a = build_optimizer(cos, {w}, 2, 10);
  EXPECT_DOUBLE_EQ(a.optimizer->param_groups()[0].get("lr"), 0.0);
  EXPECT_DOUBLE_EQ(a.optimizer->param_groups()[0].get("weight_decay"), 0.001);
  EXPECT_NEAR(lr_after(a, 5), 0.01, 1e-12);
  EXPECT_NEAR(lr_after(a, 15), 0.0, 1e-12);
  // Piecewise by epoch.
  auto pw = section("Optimizer: {name: Momentum, momentum: 0.9, lr: {name: Piecewise, decay_epochs: [1], values: [0.1, 0.01]}}\n");
  OptimizerSetup b = build_optimizer(pw, {w}, 2, 10);
  EXPECT_DOUBLE_EQ(lr_after(b, 9), 0.1);
  EXPECT_DOUBLE_EQ(lr_after(b, 1), 0.01);
  // Mistakes are named.
  EXPECT_THROW(section("Optimizer: {name: Adam, lr: {name: Cosin, learning_rate: 0.1}}\n"), ValueError);
  EXPECT_THROW(section("Optimizer: {name: Adam, lr: {name: Cosine, learning_rate: -1}}\n"), ValueError);
  EXPECT_THROW(section("Optimizer: {name: Adam}\n"), ValueError);  // lr is required
  auto bad = section("Optimizer: {name: Adam, lr: {name: Piecewise, decay_epochs: [1, 2], values: [0.1]}}\n");
  EXPECT_THROW(build_optimizer(bad, {w}, 2, 10), ValueError);
}

}  // namespace
}  // namespace skiff::train
