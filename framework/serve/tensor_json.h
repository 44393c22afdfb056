#pragma once
/// \file tensor_json.h
/// Tensors in request and response bodies:
///
///   {"shape": [1, 3], "dtype": "float32", "data": [0.5, 1, 2]}       numbers, row-major
///   {"shape": [1, 3], "dtype": "float32", "b64": "AAAAPwAAgD8AAABA"}  raw little-endian bytes
///
/// "dtype" defaults to float32. Numbers must fit the dtype (no silent wrapping).

#include <string_view>

#include <nlohmann/json.hpp>

#include "framework/tensor/tensor.h"

namespace skiff::serve {

/// \throws ValueError naming `field` (e.g. "inputs.x.shape") for anything malformed.
Tensor tensor_from_json(const nlohmann::json& value, std::string_view field);

/// `t` as {"shape", "dtype", "data"} (or "b64" when `binary`; complex and 16-bit float
/// dtypes always travel as "b64").
nlohmann::json tensor_to_json(const Tensor& t, bool binary);

}  // namespace skiff::serve
