#include "framework/cli/command_registry.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

namespace skiff::cli {

Registry<AddCommand>& commands() {
  static Registry<AddCommand> registry("skiff command");
  return registry;
}

namespace {
std::vector<std::string> words(const std::string& path) {
  std::istringstream in(path);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}
}  // namespace

void add_registered_commands(CLI::App& root) {
  std::vector<std::string> paths = commands().names();
  // Parents first: a path with fewer words is added before any longer one.
  std::stable_sort(paths.begin(), paths.end(),
                   [](const std::string& a, const std::string& b) { return words(a).size() < words(b).size(); });
  for (const auto& path : paths) {
    std::vector<std::string> w = words(path);
    CLI::App* parent = &root;
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      CLI::App* next = nullptr;
      try {
        next = parent->get_subcommand(w[i]);
      } catch (const CLI::OptionNotFound&) {
      }
      SKIFF_CHECK(next != nullptr, "command '{}': its parent command '{}' does not exist", path, w[i]);
      parent = next;
    }
    commands().get(path)(*parent);
  }
}

}  // namespace skiff::cli
