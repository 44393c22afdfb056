#include "suites/science/operator/operator_recipe.h"

#include "framework/core/error.h"
#include "framework/config/section.h"

namespace skiff::science {

OperatorRecipe parse_operator_recipe(const YAML::Node& root, const std::string& file) {
  OperatorRecipe r;
  r.file = file;
  r.root = YAML::Clone(root);
  config::Section top(root, "", file);
  if (top.has("output"))
    throw ValueError(fmt::format("{}: output.dir moved to Global.save_model_dir (the layout every recipe shares)",
                                 top.where("output")));
  top.allow_only({"task", "Global", "data", "model", "train"});
  if (top.text("task", "pinn") != "operator")
    throw ValueError(fmt::format("{}: an operator recipe needs 'task: operator'", top.where("task")));

  config::Section d = top.section("data");
  d.allow_only({"equation", "nu", "t_end", "train_samples", "test_samples", "grid", "solver_grid", "dt", "seed",
                "initial_condition"});
  if (const std::string eq = d.text("equation", "burgers"); eq != "burgers")
    throw ValueError(fmt::format("{}: unknown equation '{}'; operator data can be made for: burgers",
                                 d.where("equation"), eq));
  r.solver.nu = d.positive("nu", r.solver.nu);
  r.solver.t_end = d.positive("t_end", r.solver.t_end);
  r.solver.dt = d.positive("dt", r.solver.dt);
  r.train_samples = d.integer("train_samples", r.train_samples, 1);
  r.test_samples = d.integer("test_samples", r.test_samples, 1);
  r.grid = d.integer("grid", r.grid, 8);
  r.solver_grid = d.integer("solver_grid", r.solver_grid, 8);
  r.data_seed = uint64_t(d.integer("seed", 0));
  if (r.grid % 2 != 0) throw ValueError(fmt::format("{}: must be even, got {}", d.where("grid"), r.grid));
  if (r.solver_grid % r.grid != 0)
    throw ValueError(fmt::format("{}: must be a multiple of data.grid ({}), got {}", d.where("solver_grid"), r.grid,
                                 r.solver_grid));
  config::Section ic = d.section("initial_condition");
  ic.allow_only({"sigma", "tau", "alpha"});
  r.initial_condition.sigma = ic.positive("sigma", r.initial_condition.sigma);
  r.initial_condition.tau = ic.positive("tau", r.initial_condition.tau);
  r.initial_condition.alpha = ic.positive("alpha", r.initial_condition.alpha);

  config::Section m = top.section("model");
  m.allow_only({"modes", "width", "layers", "projection"});
  r.model.modes = m.integer("modes", r.model.modes, 1);
  r.model.width = m.integer("width", r.model.width, 1);
  r.model.layers = m.integer("layers", r.model.layers, 1);
  r.model.projection = m.integer("projection", r.model.projection, 1);
  if (r.model.modes > r.grid / 2 + 1)
    throw ValueError(fmt::format("{}: {} modes do not fit a grid of {} points (at most {})", m.where("modes"),
                                 r.model.modes, r.grid, r.grid / 2 + 1));

  config::Section g = top.section("Global");
  g.allow_only({"save_model_dir", "seed", "epoch_num", "print_batch_step", "keep_last", "max_steps"});
  r.model.seed = uint64_t(g.integer("seed", 0, 0));
  r.epochs = g.integer("epoch_num", r.epochs, 1);
  r.log_every = g.integer("print_batch_step", r.log_every, 1);
  r.keep_last = int(g.integer("keep_last", r.keep_last, 1));
  r.max_steps = g.integer("max_steps", 0, 0);
  r.output_dir = g.text("save_model_dir", r.output_dir);

  config::Section t = top.section("train");
  for (auto [old, now] : {std::pair{"seed", "Global.seed"}, std::pair{"epochs", "Global.epoch_num"}})
    if (t.has(old))
      throw ValueError(fmt::format("{}: train.{} moved to {} (the layout every recipe shares)", t.where(old), old, now));
  t.allow_only({"batch_size", "lr", "weight_decay", "step_size", "gamma"});
  r.batch_size = t.integer("batch_size", r.batch_size, 1);
  r.lr = t.positive("lr", r.lr);
  r.weight_decay = t.number("weight_decay", r.weight_decay);
  if (r.weight_decay < 0)
    throw ValueError(fmt::format("{}: must be >= 0, got {}", t.where("weight_decay"), r.weight_decay));
  r.step_size = t.integer("step_size", r.step_size, 1);
  r.gamma = t.positive("gamma", r.gamma);
  return r;
}

}  // namespace skiff::science
