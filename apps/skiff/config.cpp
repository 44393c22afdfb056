// `skiff config show -c X [-o key.path=value ...]`: prints a config file with its
// _BASE_ files merged in and the overrides applied (framework/config/config.h).
#include <fmt/format.h>

#include "apps/skiff/commands.h"
#include "framework/config/config.h"

namespace skiff::app {

void add_config_command(CLI::App& app) {
  auto* config = app.add_subcommand("config", "Inspect YAML configs (_BASE_ inheritance, -o overrides)");
  config->require_subcommand(1);
  struct Options {
    std::string file;
    std::vector<std::string> overrides;
  };
  auto o = std::make_shared<Options>();
  auto* show = config->add_subcommand(
      "show", "Print the fully merged config: its _BASE_ files first, then the file, then every -o");
  show->add_option("-c,--config", o->file, "Config YAML file")->required()->check(CLI::ExistingFile);
  show->add_option("-o,--override", o->overrides,
                   "Override a value, key.path=value (the value is YAML), e.g. -o Global.epoch_num=5");
  show->callback([o] { fmt::print("{}", config::to_yaml(config::load_config(o->file, o->overrides))); });
}

}  // namespace skiff::app
