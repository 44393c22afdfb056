#include "framework/config/config.h"

#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "framework/core/error.h"

namespace skiff::config {

namespace {

namespace fs = std::filesystem;

constexpr const char* kBaseKey = "_BASE_";

YAML::Node parse_file(const fs::path& path, const std::string& listed_by) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw IoError(listed_by.empty() ? fmt::format("config '{}': no such file", path.string())
                                    : fmt::format("config '{}' (a _BASE_ of '{}'): no such file", path.string(),
                                                  listed_by));
  YAML::Node root;
  try {
    root = YAML::LoadFile(path.string());
  } catch (const YAML::BadFile&) {
    throw IoError(fmt::format("config '{}': cannot be read", path.string()));
  } catch (const YAML::Exception& e) {
    throw ValueError(fmt::format("{}:{}: YAML syntax error: {}", path.string(), e.mark.line + 1, e.msg));
  }
  if (root.IsNull()) return YAML::Node(YAML::NodeType::Map);  // an empty file
  if (!root.IsMap()) throw ValueError(fmt::format("{}: a config file is a YAML map of sections", path.string()));
  return root;
}

std::vector<fs::path> base_paths(const YAML::Node& root, const fs::path& file) {
  const YAML::Node bases = root[kBaseKey];
  if (!bases.IsDefined() || bases.IsNull()) return {};
  std::vector<std::string> names;
  auto where = [&] { return fmt::format("{}:{}: {}", file.string(), bases.Mark().line + 1, kBaseKey); };
  if (bases.IsScalar()) {
    names.push_back(bases.as<std::string>());
  } else if (bases.IsSequence()) {
    for (const auto& b : bases) {
      if (!b.IsScalar()) throw ValueError(fmt::format("{}: expected file paths, got a nested value", where()));
      names.push_back(b.as<std::string>());
    }
  } else {
    throw ValueError(fmt::format("{}: expected a file path or a list of file paths", where()));
  }
  std::vector<fs::path> out;
  for (const auto& n : names) {
    fs::path p(n);
    out.push_back(p.is_absolute() ? p : file.parent_path() / p);
  }
  return out;
}

void check_depth(int depth) {
  if (depth > kMaxConfigDepth)
    throw ConfigError(fmt::format("config: maps nested deeper than {} levels (an anchor inside itself?)",
                                  kMaxConfigDepth));
}

// Adds to `into` every key of `from` that `into` lacks, recursing into maps both
// have: deep_merge with `into` winning.
void fill_missing(YAML::Node& into, const YAML::Node& from, int depth = 0) {
  check_depth(depth);
  for (const auto& kv : from) {
    const std::string key = key_text(kv.first, "config");
    if (!into[key].IsDefined()) {
      into[key] = YAML::Clone(kv.second);
    } else if (into[key].IsMap() && kv.second.IsMap()) {
      YAML::Node child = into[key];
      fill_missing(child, kv.second, depth + 1);
    }
  }
}

void merge_into(YAML::Node& into, const YAML::Node& from, int depth) {
  check_depth(depth);
  for (const auto& kv : from) {
    const std::string key = key_text(kv.first, "config");
    // Fresh handles each time: assigning one yaml-cpp node variable to another
    // would overwrite the node it refers to.
    if (kv.second.IsMap() && into[key].IsMap()) {
      YAML::Node child = into[key];
      merge_into(child, kv.second, depth + 1);
    } else {
      into[key] = YAML::Clone(kv.second);
    }
  }
}

// A recipe and all its bases: 64 files is far more than any real recipe uses, and keeps a
// file listing itself N times at each level (N^depth loads, no cycle) finite.
constexpr int kMaxConfigFiles = 64;

YAML::Node load_with_bases(const fs::path& file, const std::string& listed_by, std::vector<fs::path>& chain,
                           int& files_loaded) {
  if (++files_loaded > kMaxConfigFiles)
    throw ConfigError(fmt::format("config '{}': more than {} files through _BASE_", file.string(), kMaxConfigFiles));
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(file, ec);
  if (ec)
    throw IoError(listed_by.empty() ? fmt::format("config '{}': {}", file.string(), ec.message())
                                    : fmt::format("config '{}' (a _BASE_ of '{}'): {}", file.string(), listed_by,
                                                  ec.message()));
  for (const auto& c : chain)
    if (c == canonical) {
      std::string cycle;
      for (const auto& p : chain) cycle += p.string() + " -> ";
      throw ValueError(fmt::format("config: _BASE_ cycle: {}{}", cycle, canonical.string()));
    }
  YAML::Node own = parse_file(file, listed_by);
  const auto bases = base_paths(own, file);
  if (bases.empty()) return own;
  chain.push_back(canonical);
  YAML::Node merged(YAML::NodeType::Map);
  for (const auto& base : bases) deep_merge(merged, load_with_bases(base, file.string(), chain, files_loaded));
  chain.pop_back();
  own.remove(kBaseKey);
  // The file's own nodes stay in place (with their line numbers, which
  // validation errors cite); the bases only fill in what it does not set.
  fill_missing(own, merged);
  return own;
}

}  // namespace

void deep_merge(YAML::Node& into, const YAML::Node& from) { merge_into(into, from, 0); }

std::string key_text(const YAML::Node& key, const std::string& file) {
  if (!key.IsScalar())
    throw ConfigError(fmt::format("{}:{}: a key must be a plain value, not {}", file, key.Mark().line + 1,
                                  key.IsNull() ? "empty" : key.IsMap() ? "a map" : "a list"));
  return key.Scalar();
}

void apply_override(YAML::Node& root, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ValueError(fmt::format("override '{}': expected key.path=value", assignment));
  std::string path = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ValueError(fmt::format("override '{}': the value is not valid YAML ({})", assignment, e.msg));
  }
  std::vector<std::string> keys;
  for (size_t start = 0;;) {
    size_t dot = path.find('.', start);
    keys.push_back(path.substr(start, dot - start));
    if (keys.back().empty()) throw ValueError(fmt::format("override '{}': empty key in '{}'", assignment, path));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  // Walk with fresh handles, never by assigning one node variable to another
  // (that would alias and overwrite the parent).
  std::vector<YAML::Node> chain{root};
  // In a list, a key is an entry's index: Train.dataset.transforms.3.RecResizeImg.image_shape=...
  auto list_index = [&](const YAML::Node& list, const std::string& key) -> std::optional<size_t> {
    if (!list.IsSequence()) return std::nullopt;
    if (key.find_first_not_of("0123456789") != std::string::npos)
      throw ValueError(fmt::format("override '{}': '{}' is a list; index it by number", assignment, key));
    if (key.size() > 9)
      throw ValueError(fmt::format("override '{}': index {} is past the end of a list of {}", assignment, key, list.size()));
    size_t i = std::stoul(key);
    if (i >= list.size())
      throw ValueError(fmt::format("override '{}': index {} is past the end of a list of {}", assignment, i, list.size()));
    return i;
  };
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    if (auto index = list_index(chain.back(), keys[i])) {
      chain.push_back(chain.back()[*index]);
      continue;
    }
    YAML::Node next = chain.back()[keys[i]];
    if (next.IsDefined() && !next.IsNull() && !next.IsMap() && !next.IsSequence())
      throw ValueError(fmt::format("override '{}': '{}' is not a map", assignment, keys[i]));
    if (!next.IsDefined() || next.IsNull()) {
      chain.back()[keys[i]] = YAML::Node(YAML::NodeType::Map);
      next = chain.back()[keys[i]];
    }
    chain.push_back(next);
  }
  if (auto index = list_index(chain.back(), keys.back()))
    chain.back()[*index] = value;
  else
    chain.back()[keys.back()] = value;
}

YAML::Node load_config(const std::string& path, const std::vector<std::string>& overrides) {
  std::vector<fs::path> chain;
  int files_loaded = 0;
  YAML::Node root = load_with_bases(fs::path(path), "", chain, files_loaded);
  for (const auto& o : overrides) apply_override(root, o);
  return root;
}

namespace {
// Maps in block style (one key per line, nested by indentation), whatever style
// the source used; lists of scalars stay on one line.
void block_maps(YAML::Node node, int depth = 0) {
  check_depth(depth);
  if (node.IsMap()) {
    node.SetStyle(YAML::EmitterStyle::Block);
    for (auto kv : node) block_maps(kv.second, depth + 1);
  } else if (node.IsSequence()) {
    bool scalars = true;
    for (auto item : node) scalars = scalars && item.IsScalar();
    node.SetStyle(scalars ? YAML::EmitterStyle::Flow : YAML::EmitterStyle::Block);
    for (auto item : node) block_maps(item, depth + 1);
  }
}
}  // namespace

YAML::Node number_node(double value) { return YAML::Node(fmt::format("{}", value)); }

std::string to_yaml(const YAML::Node& root) {
  YAML::Node copy = YAML::Clone(root);
  block_maps(copy);
  YAML::Emitter out;
  out << copy;
  return std::string(out.c_str()) + "\n";
}

}  // namespace skiff::config
