// A whole suite in one file (docs/extending.md): `task: line_fit` recipes fit
// y = w x + b to points the recipe describes, with the framework's Linear
// layer, optimizer and Trainer, so they get checkpoints, --resume, metrics.jsonl
// and TensorBoard like every recipe.
#include <fmt/format.h>

#include <mutex>

#include "framework/config/schema.h"
#include "framework/graph/onnx_export.h"
#include "framework/graph/trace.h"
#include "framework/nn/linear.h"
#include "framework/ops/ops.h"
#include "framework/train/recipe.h"
#include "framework/train/recipe_runner.h"

namespace line_fit {

using namespace skiff;
using config::Key;
using config::Schema;
using config::Section;
using config::Type;
namespace fs = std::filesystem;

// Points on the line y = slope x + intercept, x evenly spaced in [-1, 1].
class LinePoints : public data::Dataset {
 public:
  LinePoints(double slope, double intercept, int64_t points) : slope_(slope), intercept_(intercept), n_(points) {}
  int64_t size() const override { return n_; }
  data::Example get(int64_t i) const override {
    double x = n_ == 1 ? 0.0 : -1.0 + 2.0 * double(i) / double(n_ - 1);
    return {{"x", full({1}, x)}, {"y", full({1}, slope_ * x + intercept_)}};
  }

 private:
  double slope_, intercept_;
  int64_t n_;
};

// The recipe's `Data` component: its name picks the constructor, its keys are checked first.
const config::Factory<std::shared_ptr<data::Dataset>>& datasets() {
  static config::Factory<std::shared_ptr<data::Dataset>> f("line_fit data");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("LinePoints", "points on y = slope x + intercept",
          Schema{{Key{.name = "slope", .type = Type::Number, .required = true},
                  Key{.name = "intercept", .type = Type::Number},
                  Key{.name = "points", .type = Type::Integer, .help = "how many (64)", .min = 2}}},
          [](const Section& s) -> std::shared_ptr<data::Dataset> {
            return std::make_shared<LinePoints>(s.number("slope"), s.number("intercept", 0), s.integer("points", 64, 2));
          });
  });
  return f;
}

const Schema& recipe_schema() {
  static const Schema schema{{
      Key{.name = "task", .type = Type::String, .required = true, .choices = {"line_fit"}},
      Key{.name = "Global", .type = Type::Map, .required = true,
          .schema = std::make_shared<Schema>(Schema{train::global_keys()})},
      Key{.name = "Data", .type = Type::Component, .required = true, .kind = datasets().kind()},
      train::optimizer_key(),
  }};
  return schema;
}

// What the Trainer trains: the squared error of a batch, the mean one as the metric.
class LineTask : public train::TrainTask {
 public:
  LineTask(nn::Linear& model, std::shared_ptr<data::Dataset> data) : model_(model), data_(std::move(data)) {}
  nn::Module& model() override { return model_; }
  Tensor loss(const data::Example& b) override { return mean(square(sub(model_.forward(b.at("x")), b.at("y")))); }
  std::map<std::string, double> evaluate() override {
    data::Example all = data::DataLoader(data_, {.batch_size = data_->size()}).epoch(0).next().value();
    NoGradGuard no_grad;
    return {{"mse", loss(all).item<double>()}};
  }

 private:
  nn::Linear& model_;
  std::shared_ptr<data::Dataset> data_;
};

fs::path run_dir(const train::Recipe& r) { return r.section("Global").text("save_model_dir", "./output/line_fit"); }

// The trained line: best_model.safetensors of the run.
std::unique_ptr<nn::Linear> trained_line(const train::Recipe& r) {
  auto line = std::make_unique<nn::Linear>(1, 1);
  train::load_weights(*line, run_dir(r) / "best_model.safetensors");
  line->eval();
  return line;
}

class LineFitRunner final : public train::RecipeRunner {
 public:
  std::string summary() const override { return "fit a line to points (docs/extending.md example)"; }
  void check(const train::Recipe& r, const config::ValidateOptions& options) const override {
    config::validate(r.top(), recipe_schema(), options);
  }
  train::FitResult train(const train::Recipe& r, const train::TrainRequest& request) const override {
    train::seed_run(r.section("Global"));
    nn::Linear line(1, 1);
    auto points = datasets().make(r.section("Data"));
    data::DataLoader loader(points, {.batch_size = 16, .shuffle = true});
    train::TrainerOptions o = train::trainer_options(r.section("Global"), r.section("Optimizer"), loader.num_batches());
    o.metric = "mse", o.higher_is_better = false, o.quiet = request.quiet;
    auto opt = train::build_optimizer(r.section("Optimizer"), line.parameters(), o.epochs, loader.num_batches());
    LineTask task(line, points);
    train::Trainer trainer(task, *opt.optimizer, opt.scheduler.get(), loader, o);
    return trainer.fit(train::resume_checkpoint(request, run_dir(r)));
  }
  std::map<std::string, double> evaluate(const train::Recipe& r) const override {
    auto line = trained_line(r);
    auto points = datasets().make(r.section("Data"));
    auto metrics = LineTask(*line, points).evaluate();
    metrics["samples"] = double(points->size());
    return metrics;
  }
  // Each input is an x; the result is the fitted y.
  std::vector<std::string> predict(const train::Recipe& r, const train::PredictRequest& request) const override {
    auto line = trained_line(r);
    std::vector<std::string> out;
    NoGradGuard no_grad;
    for (const auto& x : request.inputs)
      out.push_back(fmt::format("{}\t{:.6g}", x, line->forward(full({1, 1}, std::stod(x))).item<double>()));
    return out;
  }
  fs::path default_export_dir(const train::Recipe& r) const override { return run_dir(r) / "inference"; }
  train::ExportResult export_model(const train::Recipe& r, const fs::path& dir) const override {
    auto line = trained_line(r);
    fs::create_directories(dir);
    graph::export_onnx(graph::trace(*line, {zeros({1, 1})}, {.dynamic_batch = true}), (dir / "line.onnx").string());
    return {.files = {dir / "line.onnx"}};
  }
};

}  // namespace line_fit

SKIFF_REGISTER_RECIPE_RUNNER("line_fit", line_fit::LineFitRunner);
