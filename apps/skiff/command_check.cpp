// Unknown subcommands, named before CLI11 parses. CLI11 reads an unknown word
// where a subcommand is expected as a stray positional argument, and with
// --help anywhere it prints the parent's help and exits 0, so `skiff nosuchcmd
// --help` looked like success. This walks the words the way CLI11 will and
// rejects the first unknown command word with the closest real one.
#include <fmt/format.h>

#include "apps/skiff/commands.h"
#include "framework/core/error.h"
#include "framework/core/registry.h"

namespace skiff::app {

namespace {

std::vector<CLI::App*> all_subcommands(CLI::App& cmd) {
  return cmd.get_subcommands([](CLI::App*) { return true; });
}

// The option `word` names on `cmd` or an ancestor (global options such as --threads).
const CLI::Option* find_option(CLI::App* cmd, const std::string& word) {
  std::string name = word.substr(0, word.find('='));
  for (CLI::App* c = cmd; c != nullptr; c = c->get_parent())
    if (const CLI::Option* o = c->get_option_no_throw(name)) return o;
  return nullptr;
}

std::string command_path(CLI::App* cmd) {
  std::string path = cmd->get_name();
  for (CLI::App* c = cmd->get_parent(); c != nullptr; c = c->get_parent()) path = c->get_name() + " " + path;
  return path;
}

}  // namespace

void check_command_words(CLI::App& app, int argc, const char* const* argv) {
  CLI::App* cmd = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") return;
    if (word.size() > 1 && word[0] == '-') {
      // Skip the value of an option that takes one, unless it is attached (--threads=2, -c x.yml is two words).
      const CLI::Option* o = find_option(cmd, word);
      bool attached = word.find('=') != std::string::npos || (word[1] != '-' && word.size() > 2);
      if (o != nullptr && o->get_type_size() > 0 && o->get_expected_min() > 0 && !attached) ++i;
      continue;
    }
    std::vector<CLI::App*> subs = all_subcommands(*cmd);
    if (subs.empty()) return;  // a leaf command: the rest are its arguments
    CLI::App* next = nullptr;
    for (CLI::App* s : subs)
      if (s->check_name(word)) next = s;
    if (next != nullptr) {
      cmd = next;
      continue;
    }
    // A command that also takes positional arguments (skiff ocr IMAGE) may see any word.
    if (cmd->get_require_subcommand_min() == 0) return;
    std::vector<std::string> names;
    for (CLI::App* s : subs) names.push_back(s->get_name());
    std::string hint = closest_match(word, names);
    throw ValueError(fmt::format("unknown command '{}' for '{}'{}; the commands are: {}. Run '{} --help' for more",
                                 word, command_path(cmd), hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint),
                                 fmt::join(names, ", "), command_path(cmd)));
  }
}

}  // namespace skiff::app
