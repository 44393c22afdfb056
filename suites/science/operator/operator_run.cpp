#include "suites/science/operator/operator_run.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "framework/core/error.h"
#include "framework/core/splitmix.h"
#include "framework/data/dataloader.h"
#include "framework/data/dataset.h"
#include "framework/data/image_io.h"
#include "framework/io/safetensors.h"
#include "framework/ops/ops.h"
#include "framework/optim/lr_scheduler.h"
#include "framework/optim/optimizers.h"
#include "framework/train/plot.h"
#include "suites/science/recipe.h"

namespace skiff::science {

using train::Curve;
using train::line_panel;
using train::padded_range;
using train::panel_row;

namespace {
constexpr const char* kFormat = "skiff.science.operator/1";
constexpr int64_t kEvalChunk = 100;

// ||p - t|| / ||t|| per sample (rows of [B, N]) -> [B].
Tensor per_sample_relative_l2(const Tensor& prediction, const Tensor& target) {
  return norm(prediction - target, 2.0, {1}) / norm(target, 2.0, {1});
}

Tensor rows(const Tensor& t, int64_t start, int64_t count) { return narrow(t, 0, start, count); }
}  // namespace

OperatorDataset make_operator_data(const OperatorRecipe& r, DataSplit split, int64_t grid) {
  if (grid == 0) grid = r.grid;
  SKIFF_CHECK(grid > 0 && r.solver_grid % grid == 0,
              "operator data: the grid ({}) must divide the recipe's solver grid ({})", grid, r.solver_grid);
  // Independent seed streams: test initial conditions never appear in training.
  const uint64_t seed = split == DataSplit::Train ? r.data_seed : splitmix64(r.data_seed ^ 0x7e57da7aull);
  const int64_t samples = split == DataSplit::Train ? r.train_samples : r.test_samples;
  OperatorDataset d = make_burgers_dataset(samples, grid, r.solver_grid, seed, r.solver, r.initial_condition);
  return {to(d.inputs, DType::Float32), to(d.targets, DType::Float32)};
}

OperatorEvaluation evaluate_operator(Fno1d& model, const OperatorDataset& data) {
  NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  OperatorEvaluation e;
  e.samples = data.inputs.size(0);
  e.grid = data.inputs.size(1);
  for (int64_t s = 0; s < e.samples; s += kEvalChunk) {
    const int64_t n = std::min(kEvalChunk, e.samples - s);
    Tensor target = rows(data.targets, s, n);
    Tensor err = per_sample_relative_l2(model(rows(data.inputs, s, n)), target);
    for (double v : to(err, DType::Float64).to_vector<double>()) e.per_sample.push_back(v);
  }
  model.train(was_training);
  std::vector<double> sorted = e.per_sample;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double v : sorted) sum += v;
  e.mean_rel_l2 = sum / double(sorted.size());
  const size_t mid = sorted.size() / 2;
  e.median_rel_l2 = sorted.size() % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  e.max_rel_l2 = sorted.back();
  return e;
}

namespace {

// Batches of (initial condition, solution) rows; the loss is the mean relative L2.
class OperatorTask final : public train::TrainTask {
 public:
  OperatorTask(Fno1d& model, const OperatorDataset& test) : model_(model), test_(test) {}
  nn::Module& model() override { return model_; }
  Tensor loss(const data::Example& batch) override {
    return mean(per_sample_relative_l2(model_(batch.at("input")), batch.at("target")));
  }
  std::map<std::string, double> evaluate() override {
    return {{"rel_l2", evaluate_operator(model_, test_).mean_rel_l2}};
  }

 private:
  Fno1d& model_;
  const OperatorDataset& test_;
};

}  // namespace

train::FitResult fit_operator(Fno1d& model, const OperatorRecipe& r, const OperatorDataset& train,
                              const OperatorDataset& test, const OperatorRunOptions& run,
                              const std::optional<std::filesystem::path>& resume_from) {
  auto samples = std::make_shared<data::TensorDataset>(data::Example{{"input", train.inputs}, {"target", train.targets}});
  data::DataLoader loader(samples, {.batch_size = r.batch_size,
                                    .shuffle = true,
                                    .seed = splitmix64(r.model.seed ^ 0x5eedb47c4ull)});
  optim::AdamOptions ao;
  ao.lr = r.lr;
  ao.weight_decay = r.weight_decay;
  optim::Adam adam(model.parameters(), ao);
  // The Trainer steps the schedule once per batch.
  optim::StepLR schedule(adam, r.step_size * loader.num_batches(), r.gamma);
  train::TrainerOptions t;
  t.output_dir = run.output_dir;
  t.epochs = r.epochs;
  t.max_steps = r.max_steps;
  t.log_every = r.log_every;
  t.metric = "rel_l2";
  t.higher_is_better = false;
  t.keep_last = r.keep_last;
  t.quiet = run.quiet;
  t.metadata = run.metadata;
  OperatorTask task(model, test);
  train::Trainer trainer(task, adam, &schedule, loader, t);
  return trainer.fit(resume_from);
}

void save_operator(const std::string& path, Fno1d& model, const OperatorRecipe& r) {
  io::Metadata meta{{kModelFormatKey, kFormat}, {kModelRecipeKey, recipe_text(r.root)}, {"recipe_file", r.file}};
  io::save_safetensors(path, model.state_dict(), meta);
}

bool is_operator_file(const std::string& path) {
  const auto header = io::read_safetensors_header(path);
  auto it = header.metadata.find(kModelFormatKey);
  return it != header.metadata.end() && it->second == kFormat;
}

OperatorModel load_operator(const std::string& path) {
  io::SafetensorsFile f = io::load_safetensors(path);
  YAML::Node root = stored_recipe(f.metadata, path, kFormat, "a skiff neural-operator model");
  OperatorModel m{parse_operator_recipe(root, path + " (stored recipe)"), nullptr};
  m.model = std::make_shared<Fno1d>(m.recipe.model);
  try {
    m.model->load_state_dict(f.tensors);
  } catch (const Error& e) {
    throw ValueError(fmt::format("'{}': the weights do not fit the stored recipe: {}", path, e.what()));
  }
  m.model->eval();
  return m;
}

nlohmann::json operator_evaluation_json(const OperatorEvaluation& e) {
  return {{"samples", e.samples},           {"grid", e.grid},
          {"mean_rel_l2", e.mean_rel_l2},   {"median_rel_l2", e.median_rel_l2},
          {"max_rel_l2", e.max_rel_l2}};
}

std::vector<std::string> write_operator_images(const std::string& dir, Fno1d& model, const OperatorRecipe& r,
                                               const OperatorDataset& test, int64_t count) {
  count = std::min(count, test.inputs.size(0));
  const int64_t n = test.inputs.size(1);
  Tensor prediction, errors;
  {
    NoGradGuard no_grad;
    prediction = model(rows(test.inputs, 0, count));
    errors = per_sample_relative_l2(prediction, rows(test.targets, 0, count));
  }
  const auto rel_l2 = to(errors, DType::Float64).to_vector<double>();
  auto a = to(rows(test.inputs, 0, count), DType::Float64).to_vector<double>();
  auto u = to(rows(test.targets, 0, count), DType::Float64).to_vector<double>();
  auto p = to(prediction, DType::Float64).to_vector<double>();
  std::vector<double> x;
  for (int64_t j = 0; j < n; ++j) x.push_back(double(j) / double(n));
  auto sample = [&](const std::vector<double>& v, int64_t i) {
    return std::vector<double>(v.begin() + long(i * n), v.begin() + long((i + 1) * n));
  };
  const auto [lo, hi] = padded_range({a, u, p});
  std::vector<cv::Mat> panels;
  for (int64_t i = 0; i < count; ++i) {
    std::vector<Curve> curves{{sample(a, i), cv::Scalar(170, 170, 170), false},
                              {sample(u, i), cv::Scalar(0, 0, 0), false},
                              {sample(p, i), cv::Scalar(40, 40, 220), true}};
    panels.push_back(
        line_panel(x, curves, lo, hi, fmt::format("test {}: rel L2 {:.2e}", i, rel_l2[size_t(i)]), "x"));
  }
  cv::Mat img = panel_row(panels, fmt::format("grey: u(x, 0), black: solver u(x, {:g}), red dashed: operator",
                                              r.solver.t_end));
  std::filesystem::create_directories(dir);
  const std::string path = (std::filesystem::path(dir) / "samples.png").string();
  data::write_image_file(path, img);
  return {path};
}

}  // namespace skiff::science
