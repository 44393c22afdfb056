#include "suites/science/recipe.h"

#include <filesystem>

#include "framework/config/config.h"
#include "framework/core/error.h"
#include "framework/config/section.h"

namespace skiff::science {

std::unique_ptr<PinnSolver> ScienceRecipe::make_solver() const {
  return std::make_unique<PinnSolver>(problem, net_config_for(*problem, hidden, activation, dtype, seed), derivatives,
                                      sampling, seed);
}

ScienceRecipe parse_recipe(const YAML::Node& root, const std::string& file) {
  ScienceRecipe r;
  r.file = file;
  r.root = YAML::Clone(root);
  config::Section top(root, "", file);
  if (top.has("output"))
    throw ValueError(fmt::format("{}: output.dir moved to Global.save_model_dir (the layout every recipe shares)",
                                 top.where("output")));
  top.allow_only({"task", "Global", "problem", "sampling", "model", "train", "eval"});
  if (recipe_task(root, file) != "pinn")
    throw ValueError(fmt::format("{}: not a PINN recipe (task '{}')", top.where("task"), recipe_task(root, file)));
  if (!top.has("problem")) throw ValueError(fmt::format("{}: missing the 'problem' section", file));
  r.problem = make_problem(root["problem"], file);

  config::Section s = top.section("sampling");
  std::vector<std::string> keys{"method"};
  for (const auto& [key, n] : r.problem->default_counts()) {
    keys.push_back(key);
    r.sampling.counts[key] = s.integer(key, n, 1);
  }
  s.allow_only(keys);
  r.sampling.method = Sampling::LatinHypercube;
  if (s.has("method")) {
    try {
      r.sampling.method = parse_sampling(s.text("method"));
    } catch (const ValueError& e) {
      throw ValueError(fmt::format("{}: {}", s.where("method"), e.what()));
    }
  }

  config::Section m = top.section("model");
  m.allow_only({"hidden", "activation", "dtype", "derivatives"});
  r.hidden = m.integers("hidden", r.hidden, 1);
  auto parse_in = [&](const std::string& key, auto parse, auto fallback) {
    if (!m.has(key)) return fallback;
    try {
      return parse(m.text(key));
    } catch (const ValueError& e) {
      throw ValueError(fmt::format("{}: {}", m.where(key), e.what()));
    }
  };
  r.activation = parse_in("activation", parse_activation, r.activation);
  r.derivatives = parse_in("derivatives", parse_derivative_mode, r.derivatives);
  r.dtype = parse_in(
      "dtype",
      [](const std::string& t) {
        if (t == "float32") return DType::Float32;
        if (t == "float64") return DType::Float64;
        throw ValueError(fmt::format("dtype '{}' is not supported; use float32 or float64", t));
      },
      r.dtype);

  config::Section g = top.section("Global");
  g.allow_only({"save_model_dir", "seed", "print_batch_step", "keep_last", "max_steps"});
  r.seed = uint64_t(g.integer("seed", 0, 0));
  r.train.log_every = g.integer("print_batch_step", r.train.log_every, 1);
  r.keep_last = int(g.integer("keep_last", r.keep_last, 1));
  r.max_steps = g.integer("max_steps", 0, 0);

  config::Section t = top.section("train");
  for (const char* moved : {"seed", "log_every"})
    if (t.has(moved))
      throw ValueError(fmt::format("{}: train.{} moved to Global.{} (the layout every recipe shares)", t.where(moved),
                                   moved, std::string(moved) == "seed" ? "seed" : "print_batch_step"));
  t.allow_only({"target_error", "adam", "lbfgs"});
  r.train.target_error = t.number("target_error", 0.0);
  config::Section adam = t.section("adam"), lbfgs = t.section("lbfgs");
  adam.allow_only({"iterations", "lr", "gamma", "decay_steps"});
  lbfgs.allow_only({"iterations", "history"});
  r.train.adam_iterations = adam.integer("iterations", r.train.adam_iterations);
  r.train.adam_lr = adam.positive("lr", r.train.adam_lr);
  r.train.adam_gamma = adam.positive("gamma", r.train.adam_gamma);
  r.train.adam_decay_steps = adam.integer("decay_steps", r.train.adam_decay_steps, 1);
  r.train.lbfgs_iterations = lbfgs.integer("iterations", r.train.lbfgs_iterations);
  r.train.lbfgs_history = lbfgs.integer("history", r.train.lbfgs_history, 1);

  config::Section e = top.section("eval");
  e.allow_only({"grid"});
  std::vector<int64_t> grid_default(r.problem->inputs().size(), 101);
  r.eval_grid = e.integers("grid", grid_default, 2);
  if (r.eval_grid.size() != r.problem->inputs().size())
    throw ValueError(fmt::format("{}: needs {} sizes (one per input: {}), got {}", e.where("grid"),
                                 r.problem->inputs().size(), fmt::join(r.problem->inputs(), ", "), r.eval_grid.size()));

  r.output_dir = g.text("save_model_dir", "output/" + r.problem->name());
  return r;
}

YAML::Node read_recipe_yaml(const std::string& path, const std::vector<std::string>& overrides) {
  return config::load_config(path, overrides);  // _BASE_ inheritance works in recipes too
}

std::string recipe_task(const YAML::Node& root, const std::string& file) {
  config::Section top(root, "", file);
  const std::string task = top.text("task", "pinn");
  if (task != "pinn" && task != "operator")
    throw ValueError(fmt::format("{}: unknown task '{}'; use pinn (physics-informed network) or operator "
                                 "(neural operator)",
                                 top.where("task"), task));
  return task;
}

ScienceRecipe load_recipe(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_recipe(read_recipe_yaml(path, overrides), path);
}

std::string recipe_text(const YAML::Node& root) {
  YAML::Emitter out;
  out << root;
  return out.c_str();
}

YAML::Node stored_recipe(const std::map<std::string, std::string>& metadata, const std::string& path,
                         const std::string& format, const std::string& kind) {
  auto it = metadata.find(kModelFormatKey);
  if (it == metadata.end() || it->second != format || !metadata.count(kModelRecipeKey))
    throw ValueError(fmt::format("'{}' is not {} (no '{}: {}' metadata)", path, kind, kModelFormatKey, format));
  try {
    return YAML::Load(metadata.at(kModelRecipeKey));
  } catch (const YAML::Exception& e) {
    throw ValueError(fmt::format("'{}': the stored recipe is not valid YAML ({})", path, e.msg));
  }
}

}  // namespace skiff::science
