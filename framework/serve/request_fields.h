#pragma once
/// \file request_fields.h
/// Reading a request body's fields with errors that name the field, so a client
/// that sends the wrong thing learns which thing (400, "fileType: expected ...").

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "framework/serve/endpoint.h"

namespace skiff::serve {

/// \throws ValueError unless `body` is an object whose keys are all in `known`
/// (with a "did you mean" hint for a misspelt one).
void check_fields(const nlohmann::json& body, std::initializer_list<std::string_view> known);

/// The string at `field`. \throws ValueError when it is missing or not a string.
std::string required_string(const nlohmann::json& body, std::string_view field);
/// The number at `field`, or nullopt when it is absent or null.
/// \throws ValueError when it is something else, or outside [lo, hi].
std::optional<double> optional_number(const nlohmann::json& body, std::string_view field, double lo, double hi);
/// The integer at `field`, or nullopt when absent or null. \throws ValueError otherwise.
std::optional<int64_t> optional_integer(const nlohmann::json& body, std::string_view field, int64_t lo, int64_t hi);
/// The boolean at `field`, or nullopt when absent or null. \throws ValueError otherwise.
std::optional<bool> optional_bool(const nlohmann::json& body, std::string_view field);

/// The bytes a file field carries: base64 text, or (when `limits.files_root` is set) the
/// path of a file under that directory. URLs are refused: the server fetches nothing.
/// \throws ValueError naming the field: not base64, a path outside the root, too large.
std::string read_file_field(const nlohmann::json& body, std::string_view field, const RequestLimits& limits);

}  // namespace skiff::serve
