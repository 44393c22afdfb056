#pragma once
// The core subcommands of the skiff executable. Each add_* function registers
// its CLI11 subcommand and the callback that runs it. Suites add theirs through
// framework/cli/command_registry.h.

#include <CLI/CLI.hpp>

namespace skiff::app {

void add_info_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_zoo_command(CLI::App& app);
void add_graph_command(CLI::App& app);
void add_config_command(CLI::App& app);
/// `skiff serve`: the registered endpoints and models over HTTP (framework/serve).
void add_serve_command(CLI::App& app);
/// `skiff launch`: the ranks of a distributed run (framework/distributed).
void add_launch_command(CLI::App& app);
/// `skiff train`, `eval`, `predict` and `export` (YAML recipes).
void add_train_commands(CLI::App& app);
/// `skiff bench model`, added under the bench command.
void add_bench_model_command(CLI::App& bench);

/// Throws ValueError for the first word of argv that stands where `app` (or
/// one of its subcommands) expects a subcommand and names none, with the
/// closest real one. Run before CLI11 parses.
void check_command_words(CLI::App& app, int argc, const char* const* argv);

}  // namespace skiff::app
