#pragma once
/// \file command_registry.h
/// Subcommands of the `skiff` executable that suites contribute. A suite's CLI
/// target registers a function that adds its subcommand (with CLI11) under the
/// root or under a core command, and apps/skiff adds whatever is registered:
///
///   // suites/ocr/cli/ocr_command.cpp
///   SKIFF_REGISTER_COMMAND("ocr", add_ocr_command);          // skiff ocr ...
///   SKIFF_REGISTER_COMMAND("bench ocr", add_bench_ocr_command);  // skiff bench ocr ...
///
/// The key is the command's path from the root; every word but the last must
/// name a command that exists when the commands are added.
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "framework/core/registry.h"

namespace skiff::cli {

/// Adds one subcommand to `parent` (the root app, or the command its path names).
using AddCommand = std::function<void(CLI::App& parent)>;

/// Every registered command, by path ("ocr", "bench ocr").
Registry<AddCommand>& commands();

/// Adds every registered command to `root`, parents before children, each level
/// in name order. \throws ValueError when a path's parent does not exist.
void add_registered_commands(CLI::App& root);

namespace detail {
struct CommandRegistrar {
  CommandRegistrar(const std::string& path, AddCommand add) { commands().add(path, std::move(add)); }
};
}  // namespace detail

}  // namespace skiff::cli

#define SKIFF_COMMAND_CONCAT2(a, b) a##b
#define SKIFF_COMMAND_CONCAT(a, b) SKIFF_COMMAND_CONCAT2(a, b)
/// Registers `add` (a function of CLI::App&) as the command at `path`.
#define SKIFF_REGISTER_COMMAND(path, add) \
  static const ::skiff::cli::detail::CommandRegistrar SKIFF_COMMAND_CONCAT(skiff_command_, __COUNTER__)(path, add)
