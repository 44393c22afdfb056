// `skiff bench pinn`: one optimizer step (forward, PDE derivatives, backward,
// Adam) of the plate-bending and Poisson PINNs, the cases bench/pytorch_pinn.py
// runs in PyTorch (bench/compare_pinn.sh prints the ratios).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "framework/cli/bench_timing.h"
#include "framework/cli/command_registry.h"
#include "framework/autograd/engine.h"
#include "framework/core/threading.h"
#include "framework/optim/optimizers.h"
#include "suites/science/recipe.h"

namespace skiff::science {
namespace {

using cli::median_seconds;
using cli::parse_threads_list;

// MLP 2 -> 50 x 4 -> 1 (tanh), 2000 interior + 400 boundary points, float32.
constexpr const char* kCases[][2] = {
    {"plate", "problem: {name: plate_bending}"},
    {"poisson", "problem: {name: poisson, solution: {kx: 1, ky: 2}}"},
};

double step_seconds(const std::string& problem_yaml, const std::string& mode) {
  std::string yaml = problem_yaml +
                     "\nsampling: {interior: 2000, boundary: 400}\nmodel: {hidden: [50, 50, 50, 50], derivatives: " +
                     mode + "}\n";
  auto recipe = science::parse_recipe(YAML::Load(yaml), "bench");
  auto solver = recipe.make_solver();
  optim::Adam adam(solver->net().parameters());
  return median_seconds([&] {
    adam.zero_grad();
    backward(solver->loss());
    adam.step();
  }, 1.0, 5, 2);
}

void add_bench_pinn_command(CLI::App& bench) {
  struct Options {
    std::string threads = "1,2";
    bool json = false;
    bool with_autograd = true;
    std::string only;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = bench.add_subcommand(
      "pinn", "One Adam step of the plate-bending and Poisson PINNs (MLP 2-50x4-1 tanh, 2000 + 400 points), with "
              "Taylor-mode derivatives and with nested autograd");
  cmd->add_option("--threads-list", o->threads, "Comma-separated thread counts to run with")->capture_default_str();
  cmd->add_flag("--json", o->json, "One JSON object per line");
  cmd->add_flag("!--no-autograd", o->with_autograd, "Skip the nested-autograd variants");
  cmd->add_option("--problem", o->only, "Run only this case: plate or poisson");
  cmd->callback([o] {
    for (int nt : parse_threads_list(o->threads)) {
      set_num_threads(nt);
      for (const auto& c : kCases) {
        if (!o->only.empty() && o->only != c[0]) continue;
        for (std::string mode : {"jet", "autograd"}) {
          if (mode == "autograd" && !o->with_autograd) continue;
          std::string name = fmt::format("pinn_{}_step{}", c[0], mode == "jet" ? "" : "_autograd");
          double s = step_seconds(c[1], mode);
          if (o->json)
            fmt::print("{}\n", nlohmann::json{{"bench", name}, {"threads", nt}, {"seconds", s}}.dump());
          else
            fmt::print("{:<26} threads={}  {:9.3f} ms\n", name, nt, s * 1e3);
          std::fflush(stdout);
        }
      }
    }
  });
}

}  // namespace
}  // namespace skiff::science

SKIFF_REGISTER_COMMAND("bench pinn", skiff::science::add_bench_pinn_command);
