#include "framework/serve/request_fields.h"

#include <cmath>
#include <filesystem>
#include <vector>

#include "framework/core/error.h"
#include "framework/io/base64.h"
#include "framework/io/file.h"

namespace skiff::serve {
namespace {

namespace fs = std::filesystem;

const nlohmann::json* find(const nlohmann::json& body, std::string_view field) {
  if (!body.is_object()) return nullptr;
  auto it = body.find(std::string(field));
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

const char* type_name(const nlohmann::json& v) { return v.type_name(); }

/// `path` (relative to `root`, or absolute) when it names a regular file inside `root`.
std::optional<fs::path> file_under(const fs::path& root, std::string_view path) {
  std::error_code ec;
  const fs::path canonical_root = fs::canonical(root, ec);
  if (ec) return std::nullopt;
  fs::path candidate = fs::path(path).is_absolute() ? fs::path(path) : canonical_root / fs::path(path);
  const fs::path resolved = fs::canonical(candidate, ec);  // follows links: a link out of the root is outside
  if (ec || !fs::is_regular_file(resolved, ec)) return std::nullopt;
  auto [root_end, _] = std::mismatch(canonical_root.begin(), canonical_root.end(), resolved.begin(), resolved.end());
  if (root_end != canonical_root.end()) return std::nullopt;
  return resolved;
}

}  // namespace

void check_fields(const nlohmann::json& body, std::initializer_list<std::string_view> known) {
  SKIFF_CHECK(body.is_object(), "the request body must be a JSON object, got {}", type_name(body));
  std::vector<std::string> names(known.begin(), known.end());
  for (const auto& [key, value] : body.items()) {
    if (std::find(names.begin(), names.end(), key) != names.end()) continue;
    const std::string hint = closest_match(key, names);
    SKIFF_THROW(ValueError, "unknown field '{}'{}", key, hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint));
  }
}

std::string required_string(const nlohmann::json& body, std::string_view field) {
  const nlohmann::json* v = find(body, field);
  SKIFF_CHECK(v, "{}: this field is required", field);
  SKIFF_CHECK(v->is_string(), "{}: expected a string, got {}", field, type_name(*v));
  return v->get<std::string>();
}

std::optional<double> optional_number(const nlohmann::json& body, std::string_view field, double lo, double hi) {
  const nlohmann::json* v = find(body, field);
  if (!v) return std::nullopt;
  SKIFF_CHECK(v->is_number(), "{}: expected a number, got {}", field, type_name(*v));
  const double x = v->get<double>();
  SKIFF_CHECK(std::isfinite(x) && x >= lo && x <= hi, "{}: expected a number in [{}, {}], got {}", field, lo, hi, x);
  return x;
}

std::optional<int64_t> optional_integer(const nlohmann::json& body, std::string_view field, int64_t lo, int64_t hi) {
  const nlohmann::json* v = find(body, field);
  if (!v) return std::nullopt;
  SKIFF_CHECK(v->is_number_integer(), "{}: expected an integer, got {}", field,
              v->is_number() ? v->dump() : std::string(type_name(*v)));
  const int64_t x = v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(INT64_MAX) ? INT64_MAX : v->get<int64_t>();
  SKIFF_CHECK(x >= lo && x <= hi, "{}: expected an integer in [{}, {}], got {}", field, lo, hi, v->dump());
  return x;
}

std::optional<bool> optional_bool(const nlohmann::json& body, std::string_view field) {
  const nlohmann::json* v = find(body, field);
  if (!v) return std::nullopt;
  SKIFF_CHECK(v->is_boolean(), "{}: expected true or false, got {}", field, type_name(*v));
  return v->get<bool>();
}

std::string read_file_field(const nlohmann::json& body, std::string_view field, const RequestLimits& limits) {
  const std::string value = required_string(body, field);
  SKIFF_CHECK(!value.empty(), "{}: empty (send the file's bytes as base64)", field);
  SKIFF_CHECK(value.rfind("http://", 0) != 0 && value.rfind("https://", 0) != 0,
              "{}: the server does not fetch URLs; send the file's bytes as base64", field);
  auto read_limited = [&](const fs::path& path) {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    SKIFF_CHECK(!ec && size <= limits.max_file_bytes, "{}: the file is larger than the {}-byte limit", field,
                limits.max_file_bytes);
    return io::read_file(path);
  };
  std::error_code ec;
  if (limits.any_file && fs::is_regular_file(value, ec)) return read_limited(value);
  if (!limits.files_root.empty())
    if (auto path = file_under(limits.files_root, value)) return read_limited(*path);
  // A base64 text is 4/3 of its bytes: check before decoding.
  SKIFF_CHECK(value.size() / 4 * 3 <= limits.max_file_bytes + 3, "{}: the file is larger than the {}-byte limit",
              field, limits.max_file_bytes);
  try {
    return io::base64_decode(value, field);
  } catch (const ValueError& e) {
    if (limits.files_root.empty() && !limits.any_file) throw;
    // Name what was sent: a path with a typo is the likely mistake.
    const std::string shown = value.size() <= 80 ? value : value.substr(0, 77) + "...";
    SKIFF_THROW(ValueError, "{}: '{}' is neither {} nor base64 ({})", field, shown,
                limits.any_file ? "an existing file" : "a file under the server's files root", e.what());
  }
}

}  // namespace skiff::serve
