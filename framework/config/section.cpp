#include "framework/config/section.h"

#include <algorithm>
#include <cmath>

#include "framework/config/config.h"
#include "framework/core/error.h"
#include "framework/core/registry.h"

namespace skiff::config {

Section::Section(YAML::Node node, std::string path, std::string file)
    : node_(std::move(node)), path_(std::move(path)), file_(std::move(file)) {
  if (!node_.IsDefined() || node_.IsNull()) node_ = YAML::Node(YAML::NodeType::Map);
  if (!node_.IsMap())
    throw ValueError(fmt::format("{}:{}: {}: expected a map of settings", file_, node_.Mark().line + 1,
                                 path_.empty() ? "recipe" : path_));
}

std::string Section::where(const std::string& key) const {
  std::string p = path_.empty() ? key : path_ + "." + key;
  // The key's own line; a key an -o override created has no line (-1).
  for (const auto& kv : node_)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) {
      int line = kv.first.Mark().line;
      return line >= 0 ? fmt::format("{}:{}: {}", file_, line + 1, p) : fmt::format("{}: {} (set with -o)", file_, p);
    }
  int line = node_.Mark().line + 1;
  return line > 0 ? fmt::format("{}:{}: {}", file_, line, p) : fmt::format("{}: {}", file_, p);
}

YAML::Node Section::get(const std::string& key) const {
  for (const auto& kv : node_)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
  return YAML::Node();
}

bool Section::has(const std::string& key) const {
  YAML::Node n = get(key);
  return n.IsDefined() && !n.IsNull();
}

namespace {
template <class T>
T scalar_as(const YAML::Node& n, const std::string& where, const char* what) {
  if (!n.IsScalar()) throw ValueError(fmt::format("{}: expected {}", where, what));
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    throw ValueError(fmt::format("{}: expected {}, got '{}'", where, what, n.Scalar()));
  }
}
}  // namespace

double Section::number(const std::string& key, std::optional<double> fallback) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    throw ValueError(fmt::format("{}: missing (a number is required)", where(key)));
  }
  double v = scalar_as<double>(get(key), where(key), "a number");
  if (!std::isfinite(v)) throw ValueError(fmt::format("{}: expected a finite number, got {}", where(key), v));
  return v;
}

double Section::positive(const std::string& key, std::optional<double> fallback) const {
  double v = number(key, fallback);
  if (!(v > 0)) throw ValueError(fmt::format("{}: must be > 0, got {}", where(key), v));
  return v;
}

int64_t Section::integer(const std::string& key, std::optional<int64_t> fallback, int64_t min) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    throw ValueError(fmt::format("{}: missing (an integer is required)", where(key)));
  }
  auto v = scalar_as<int64_t>(get(key), where(key), "an integer");
  if (v < min) throw ValueError(fmt::format("{}: must be >= {}, got {}", where(key), min, v));
  return v;
}

bool Section::boolean(const std::string& key, std::optional<bool> fallback) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    throw ValueError(fmt::format("{}: missing (true or false is required)", where(key)));
  }
  return scalar_as<bool>(get(key), where(key), "true or false");
}

std::vector<std::string> Section::texts(const std::string& key, std::optional<std::vector<std::string>> fallback) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    throw ValueError(fmt::format("{}: missing (a list of strings is required)", where(key)));
  }
  YAML::Node n = get(key);
  if (n.IsScalar()) return {scalar_as<std::string>(n, where(key), "a string")};
  if (!n.IsSequence()) throw ValueError(fmt::format("{}: expected a list of strings", where(key)));
  std::vector<std::string> out;
  for (const auto& e : n) out.push_back(scalar_as<std::string>(e, where(key), "a list of strings"));
  return out;
}

std::vector<std::string> Section::keys() const {
  std::vector<std::string> out;
  for (const auto& kv : node_) out.push_back(key_text(kv.first, file_));
  return out;
}

std::string Section::text(const std::string& key, std::optional<std::string> fallback) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    throw ValueError(fmt::format("{}: missing (a string is required)", where(key)));
  }
  return scalar_as<std::string>(get(key), where(key), "a string");
}

std::vector<double> Section::numbers(const std::string& key, std::optional<std::vector<double>> fallback) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    throw ValueError(fmt::format("{}: missing (a list of numbers is required)", where(key)));
  }
  YAML::Node n = get(key);
  if (!n.IsSequence()) throw ValueError(fmt::format("{}: expected a list of numbers", where(key)));
  std::vector<double> out;
  for (const auto& e : n) out.push_back(scalar_as<double>(e, where(key), "a list of numbers"));
  return out;
}

std::vector<int64_t> Section::integers(const std::string& key, std::optional<std::vector<int64_t>> fallback,
                                             int64_t min) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    throw ValueError(fmt::format("{}: missing (a list of integers is required)", where(key)));
  }
  YAML::Node n = get(key);
  if (!n.IsSequence()) throw ValueError(fmt::format("{}: expected a list of integers", where(key)));
  std::vector<int64_t> out;
  for (const auto& e : n) {
    out.push_back(scalar_as<int64_t>(e, where(key), "a list of integers"));
    if (out.back() < min) throw ValueError(fmt::format("{}: entries must be >= {}, got {}", where(key), min, out.back()));
  }
  return out;
}

Section Section::section(const std::string& key) const {
  return Section(get(key), path_.empty() ? key : path_ + "." + key, file_);
}

void Section::allow_only(const std::vector<std::string>& allowed) const {
  for (const auto& kv : node_) {
    std::string key = key_text(kv.first, file_);
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string near = closest_match(key, allowed);
    // The key's own line: a map value starts on the line below its key.
    std::string path = path_.empty() ? key : path_ + "." + key;
    int line = kv.first.Mark().line;  // -1 for a key an -o override created
    std::string at = line >= 0 ? fmt::format("{}:{}: {}", file_, line + 1, path)
                               : fmt::format("{}: {} (set with -o)", file_, path);
    throw ValueError(fmt::format("{}: unknown key{}", at,
                                 near.empty() ? fmt::format("; valid keys: {}", fmt::join(allowed, ", "))
                                              : fmt::format("; did you mean '{}'?", near)));
  }
}

}  // namespace skiff::config
