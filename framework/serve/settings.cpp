#include "framework/serve/settings.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "framework/core/error.h"

namespace skiff::serve {

const std::string* SettingsReader::find(const std::string& key) {
  known_.insert(key);
  auto it = settings_.find(key);
  return it == settings_.end() ? nullptr : &it->second;
}

std::string SettingsReader::text(const std::string& key, std::string fallback) {
  const std::string* v = find(key);
  return v ? *v : std::move(fallback);
}

double SettingsReader::number(const std::string& key, double fallback, double lo, double hi) {
  const std::string* v = find(key);
  if (!v) return fallback;
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(*v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  SKIFF_CHECK(used == v->size() && used > 0 && std::isfinite(x) && x >= lo && x <= hi,
              "--set {}.{}: expected a number in [{}, {}], got '{}'", endpoint_, key, lo, hi, *v);
  return x;
}

bool SettingsReader::flag(const std::string& key, bool fallback) {
  const std::string* v = find(key);
  if (!v) return fallback;
  std::string s = *v;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "0" || s == "no" || s == "off") return false;
  SKIFF_THROW(ValueError, "--set {}.{}: expected true or false, got '{}'", endpoint_, key, *v);
}

void SettingsReader::finish() const {
  std::vector<std::string> known(known_.begin(), known_.end());
  for (const auto& [key, value] : settings_) {
    if (known_.count(key)) continue;
    const std::string hint = closest_match(key, known);
    std::string all;
    for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
    SKIFF_THROW(ValueError, "--set {}.{}: endpoint '{}' has no such setting{} (it has: {})", endpoint_, key, endpoint_,
                hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint), all);
  }
}

}  // namespace skiff::serve
