#include "framework/train/recipe.h"

#include <cmath>
#include <mutex>
#include <numbers>

#include "framework/core/rng.h"
#include "framework/optim/optimizers.h"

namespace skiff::train {

using config::Key;
using config::Schema;
using config::Section;
using config::Type;

namespace {

// A schedule as a function of the iteration, wrapped as an LRScheduler so its
// state (the iteration) checkpoints like any other.
class FunctionLR : public optim::LRScheduler {
 public:
  FunctionLR(optim::Optimizer& opt, std::function<double(int64_t)> factor) : LRScheduler(opt), factor_(std::move(factor)) {
    initialize();
  }
  double lr_at(int64_t epoch, size_t g) const override { return base_lrs_[g] * factor_(epoch); }

 private:
  std::function<double(int64_t)> factor_;
};

struct Schedule {
  double learning_rate;
  std::function<double(int64_t)> factor;  // of the iteration
};

using ScheduleFactory = config::Factory<Schedule, int64_t /*epochs*/, int64_t /*steps per epoch*/>;

// Multiplies a schedule by a linear warm-up from 0 over `warmup` steps (Paddle's LinearWarmup).
std::function<double(int64_t)> with_warmup(std::function<double(int64_t)> f, int64_t warmup) {
  if (warmup <= 0) return f;
  return [f = std::move(f), warmup](int64_t it) {
    if (it < warmup) return f(0) * double(it) / double(warmup);
    return f(it - warmup);
  };
}

const ScheduleFactory& schedules() {
  static ScheduleFactory f("lr");
  static std::once_flag once;
  std::call_once(once, [] {
    Key lr{.name = "learning_rate", .type = Type::Number, .help = "base learning rate", .required = true, .min = 0};
    Key warmup{.name = "warmup_epoch", .type = Type::Number, .help = "linear warm-up length in epochs", .min = 0};
    auto warm_steps = [](const Section& s, int64_t spe) { return int64_t(std::lround(s.number("warmup_epoch", 0) * double(spe))); };
    f.add("Const", "constant learning rate", Schema{{lr, warmup}}, [=](const Section& s, int64_t, int64_t spe) {
      return Schedule{s.number("learning_rate"), with_warmup([](int64_t) { return 1.0; }, warm_steps(s, spe))};
    });
    f.add("Cosine", "cosine decay to 0 over the run (after warm-up)", Schema{{lr, warmup}},
          [=](const Section& s, int64_t epochs, int64_t spe) {
            int64_t w = warm_steps(s, spe);
            double span = double(std::max<int64_t>(1, epochs * spe - w));
            return Schedule{s.number("learning_rate"), with_warmup([span](int64_t it) {
                              return 0.5 * (1 + std::cos(std::numbers::pi * std::min(1.0, double(it) / span)));
                            }, w)};
          });
    f.add("Piecewise", "values[i] from epoch decay_epochs[i-1] on",
          Schema{{warmup, Key{.name = "decay_epochs", .type = Type::Integers, .required = true, .min = 0},
                  Key{.name = "values", .type = Type::Numbers, .required = true, .min = 0}}},
          [=](const Section& s, int64_t, int64_t spe) {
            auto bounds = s.integers("decay_epochs");
            auto values = s.numbers("values");
            if (values.size() != bounds.size() + 1)
              throw ValueError(fmt::format("{}: needs one value more than decay_epochs ({} values, {} epochs)",
                                           s.where("values"), values.size(), bounds.size()));
            double base = values[0];
            return Schedule{base, with_warmup([=](int64_t it) {
                              size_t k = 0;
                              while (k < bounds.size() && it >= bounds[k] * spe) ++k;
                              return base > 0 ? values[k] / base : 0.0;
                            }, warm_steps(s, spe))};
          });
  });
  return f;
}

// A regularizer is the weight decay it adds to the gradient.
const config::Factory<double>& regularizers() {
  static config::Factory<double> f("regularizer");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("L2", "weight decay (added to the gradient)",
          Schema{{Key{.name = "factor", .type = Type::Number, .required = true, .min = 0}}},
          [](const Section& s) { return s.number("factor"); });
  });
  return f;
}

using OptimizerFactory = config::Factory<std::unique_ptr<optim::Optimizer>, std::vector<Tensor>, double /*lr*/,
                                         double /*weight decay*/>;

const OptimizerFactory& optimizers() {
  static OptimizerFactory f("optimizer");
  static std::once_flag once;
  std::call_once(once, [] {
    schedules();
    regularizers();
    std::vector<Key> common{
        Key{.name = "lr", .type = Type::Component, .help = "learning-rate schedule", .required = true, .kind = "lr"},
        Key{.name = "regularizer", .type = Type::Component, .help = "weight decay", .kind = "regularizer"},
        Key{.name = "clip_norm", .type = Type::Number, .help = "clip the gradients' global L2 norm", .min = 0},
    };
    auto with = [&](std::vector<Key> own) {
      Schema s{common};
      s.keys.insert(s.keys.end(), own.begin(), own.end());
      return s;
    };
    Key beta1{.name = "beta1", .type = Type::Number, .min = 0, .max = 1};
    Key beta2{.name = "beta2", .type = Type::Number, .min = 0, .max = 1};
    Key eps{.name = "epsilon", .type = Type::Number, .min = 0};
    auto adam = [](const Section& s, double lr, double wd) {
      return optim::AdamOptions{.lr = lr, .beta1 = s.number("beta1", 0.9), .beta2 = s.number("beta2", 0.999),
                                .eps = s.number("epsilon", 1e-8), .weight_decay = wd};
    };
    f.add("Adam", "Adam (L2 regularizer added to the gradient)", with({beta1, beta2, eps}),
          [=](const Section& s, std::vector<Tensor> p, double lr, double wd) -> std::unique_ptr<optim::Optimizer> {
            return std::make_unique<optim::Adam>(std::move(p), adam(s, lr, wd));
          });
    f.add("AdamW", "Adam with decoupled weight decay", with({beta1, beta2, eps, Key{.name = "weight_decay", .type = Type::Number, .min = 0}}),
          [=](const Section& s, std::vector<Tensor> p, double lr, double wd) -> std::unique_ptr<optim::Optimizer> {
            return std::make_unique<optim::AdamW>(std::move(p), adam(s, lr, s.number("weight_decay", wd > 0 ? wd : 0.01)));
          });
    f.add("Momentum", "SGD with momentum", with({Key{.name = "momentum", .type = Type::Number, .min = 0, .max = 1}}),
          [](const Section& s, std::vector<Tensor> p, double lr, double wd) -> std::unique_ptr<optim::Optimizer> {
            return std::make_unique<optim::SGD>(std::move(p),
                                                optim::SGDOptions{.lr = lr, .momentum = s.number("momentum", 0.9), .weight_decay = wd});
          });
  });
  return f;
}

}  // namespace

std::vector<Key> global_keys() {
  return {
      Key{.name = "epoch_num", .type = Type::Integer, .help = "epochs to train", .min = 1},
      Key{.name = "max_steps", .type = Type::Integer, .help = "stop after this many steps (0: all epochs)", .min = 0},
      Key{.name = "print_batch_step", .type = Type::Integer, .help = "log every N steps", .min = 1},
      Key{.name = "eval_batch_step", .type = Type::Any, .help = "[start, every] or every: evaluate every N steps"},
      Key{.name = "save_epoch_step", .type = Type::Integer, .help = "checkpoint every N epochs", .min = 1},
      Key{.name = "save_model_dir", .type = Type::String, .help = "output directory of the run"},
      Key{.name = "pretrained_model", .type = Type::String, .help = "weights to start from: zoo name or file"},
      Key{.name = "checkpoints", .type = Type::String, .help = "checkpoint or weights to resume / evaluate / export"},
      Key{.name = "allow_random_init", .type = Type::Boolean,
          .help = "let eval / predict / export run a model with no trained or pretrained weights"},
      Key{.name = "save_inference_dir", .type = Type::String, .help = "where skiff export writes the ONNX model"},
      Key{.name = "seed", .type = Type::Integer, .help = "random seed (default 42)", .min = 0},
      Key{.name = "ema_decay", .type = Type::Number, .help = "EMA of the weights (0: off)", .min = 0, .max = 1},
      Key{.name = "keep_last", .type = Type::Integer, .help = "checkpoints kept", .min = 1},
      Key{.name = "use_gpu", .type = Type::Boolean, .help = "accepted for PaddleOCR recipes; skiff trains on the CPU"},
      Key{.name = "cal_metric_during_train", .type = Type::Boolean, .help = "accepted for PaddleOCR recipes"},
      Key{.name = "log_smooth_window", .type = Type::Integer, .help = "accepted for PaddleOCR recipes", .min = 1},
      Key{.name = "distributed", .type = Type::Boolean, .help = "accepted for PaddleOCR recipes"},
      Key{.name = "zero_stage", .type = Type::Integer,
          .help = "under skiff launch: 1 shards the optimizer state across the ranks (ZeRO stage 1)", .min = 0, .max = 1},
  };
}

Key optimizer_key() {
  optimizers();
  return Key{.name = "Optimizer", .type = Type::Component, .help = "optimizer, lr schedule, regularizer",
             .required = true, .kind = "optimizer"};
}

TrainerOptions trainer_options(const Section& global, const Section& optimizer, int64_t steps_per_epoch) {
  TrainerOptions o;
  o.output_dir = global.text("save_model_dir", "./output");
  o.epochs = global.integer("epoch_num", 1, 1);
  o.max_steps = global.integer("max_steps", 0);
  o.log_every = global.integer("print_batch_step", 10, 1);
  if (global.has("eval_batch_step")) {
    YAML::Node n = global.get("eval_batch_step");
    if (n.IsSequence()) {
      auto v = global.integers("eval_batch_step", std::nullopt, 0);
      if (v.size() != 2 || v[1] < 1)
        throw ValueError(fmt::format("{}: expected [start, every] with every >= 1", global.where("eval_batch_step")));
      o.eval_start = v[0], o.eval_every = v[1];
    } else {
      o.eval_every = global.integer("eval_batch_step", std::nullopt, 1);
    }
  }
  o.checkpoint_every = global.integer("save_epoch_step", 1, 1) * steps_per_epoch;
  o.ema_decay = global.number("ema_decay", 0);
  o.keep_last = int(global.integer("keep_last", 2, 1));
  o.clip_norm = optimizer.number("clip_norm", 0);
  if (global.has("zero_stage")) o.zero_stage = int(global.integer("zero_stage", 0, 0));
  return o;
}

OptimizerSetup build_optimizer(const Section& section, std::vector<Tensor> params, int64_t epochs,
                               int64_t steps_per_epoch) {
  Schedule schedule = schedules().make(section.section("lr"), epochs, steps_per_epoch);
  double wd = 0;
  if (section.has("regularizer")) wd = regularizers().make(section.section("regularizer"));
  OptimizerSetup out;
  out.optimizer = optimizers().make(section, std::move(params), schedule.learning_rate, wd);
  out.scheduler = std::make_unique<FunctionLR>(*out.optimizer, schedule.factor);
  return out;
}

void seed_run(const Section& global) { manual_seed(uint64_t(global.integer("seed", 42))); }

}  // namespace skiff::train
