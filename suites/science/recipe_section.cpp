#include "suites/science/recipe_section.h"

#include <algorithm>
#include <cmath>

#include "framework/core/error.h"

namespace skiff::science {

RecipeSection::RecipeSection(YAML::Node node, std::string path, std::string file)
    : node_(std::move(node)), path_(std::move(path)), file_(std::move(file)) {
  if (!node_.IsDefined() || node_.IsNull()) node_ = YAML::Node(YAML::NodeType::Map);
  if (!node_.IsMap())
    throw ValueError(fmt::format("{}:{}: {}: expected a map of settings", file_, node_.Mark().line + 1,
                                 path_.empty() ? "recipe" : path_));
}

std::string RecipeSection::where(const std::string& key) const {
  YAML::Node n = get(key);
  int line = (n.IsDefined() ? n.Mark().line : node_.Mark().line) + 1;
  std::string p = path_.empty() ? key : path_ + "." + key;
  return line > 0 ? fmt::format("{}:{}: {}", file_, line, p) : fmt::format("{}: {}", file_, p);
}

YAML::Node RecipeSection::get(const std::string& key) const {
  for (const auto& kv : node_)
    if (kv.first.as<std::string>() == key) return kv.second;
  return YAML::Node();
}

bool RecipeSection::has(const std::string& key) const {
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

double RecipeSection::number(const std::string& key, std::optional<double> fallback) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    throw ValueError(fmt::format("{}: missing (a number is required)", where(key)));
  }
  double v = scalar_as<double>(get(key), where(key), "a number");
  if (!std::isfinite(v)) throw ValueError(fmt::format("{}: expected a finite number, got {}", where(key), v));
  return v;
}

double RecipeSection::positive(const std::string& key, std::optional<double> fallback) const {
  double v = number(key, fallback);
  if (!(v > 0)) throw ValueError(fmt::format("{}: must be > 0, got {}", where(key), v));
  return v;
}

int64_t RecipeSection::integer(const std::string& key, std::optional<int64_t> fallback, int64_t min) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    throw ValueError(fmt::format("{}: missing (an integer is required)", where(key)));
  }
  auto v = scalar_as<int64_t>(get(key), where(key), "an integer");
  if (v < min) throw ValueError(fmt::format("{}: must be >= {}, got {}", where(key), min, v));
  return v;
}

std::string RecipeSection::text(const std::string& key, std::optional<std::string> fallback) const {
  if (!has(key)) {
    if (fallback) return *fallback;
    throw ValueError(fmt::format("{}: missing (a string is required)", where(key)));
  }
  return scalar_as<std::string>(get(key), where(key), "a string");
}

std::vector<double> RecipeSection::numbers(const std::string& key, std::optional<std::vector<double>> fallback) const {
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

std::vector<int64_t> RecipeSection::integers(const std::string& key, std::optional<std::vector<int64_t>> fallback,
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

RecipeSection RecipeSection::section(const std::string& key) const {
  return RecipeSection(get(key), path_.empty() ? key : path_ + "." + key, file_);
}

std::string closest_word(const std::string& word, const std::vector<std::string>& allowed) {
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diag = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  std::string best;
  size_t best_d = std::max<size_t>(3, word.size() / 2) + 1;
  for (const auto& w : allowed) {
    size_t d = distance(word, w);
    if (d < best_d) best_d = d, best = w;
  }
  return best;
}

void RecipeSection::allow_only(const std::vector<std::string>& allowed) const {
  for (const auto& kv : node_) {
    std::string key = kv.first.as<std::string>();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string near = closest_word(key, allowed);
    throw ValueError(fmt::format("{}: unknown key{}", where(key),
                                 near.empty() ? fmt::format("; valid keys: {}", fmt::join(allowed, ", "))
                                              : fmt::format("; did you mean '{}'?", near)));
  }
}

}  // namespace skiff::science
