#include "framework/serve/tensor_json.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "framework/core/error.h"
#include "framework/io/base64.h"

namespace skiff::serve {
namespace {

using nlohmann::json;

/// Whether the dtype's values travel as JSON numbers (or only as raw bytes).
bool has_json_numbers(DType t) {
  return !is_complex(t) && t != DType::Float16 && t != DType::BFloat16;
}

template <typename T>
T number_as(const json& v, std::string_view field, size_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    SKIFF_CHECK(v.is_boolean() || (v.is_number_integer() && (v == 0 || v == 1)),
                "{}.data[{}]: expected true/false or 0/1, got {}", field, i, v.dump());
    return v.is_boolean() ? v.get<bool>() : v.get<int64_t>() != 0;
  } else if constexpr (std::is_integral_v<T>) {
    SKIFF_CHECK(v.is_number_integer(), "{}.data[{}]: expected an integer, got {}", field, i, v.dump());
    const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(std::numeric_limits<T>::max())
                                             : v.get<int64_t>() >= int64_t(std::numeric_limits<T>::min()) &&
                                                   v.get<int64_t>() <= int64_t(std::numeric_limits<T>::max());
    SKIFF_CHECK(fits, "{}.data[{}]: {} does not fit the tensor's dtype", field, i, v.dump());
    return v.is_number_unsigned() ? T(v.get<uint64_t>()) : T(v.get<int64_t>());
  } else {
    SKIFF_CHECK(v.is_number(), "{}.data[{}]: expected a number, got {}", field, i, v.dump());
    return T(v.get<double>());
  }
}

}  // namespace

Tensor tensor_from_json(const json& value, std::string_view field) {
  SKIFF_CHECK(value.is_object(), "{}: expected an object with shape, dtype and data", field);
  for (const auto& [key, v] : value.items())
    SKIFF_CHECK(key == "shape" || key == "dtype" || key == "data" || key == "b64",
                "{}: unknown field '{}' (a tensor has shape, dtype, and data or b64)", field, key);
  auto shape_it = value.find("shape");
  SKIFF_CHECK(shape_it != value.end() && shape_it->is_array(), "{}.shape: required, a list of sizes", field);
  SKIFF_CHECK(shape_it->size() <= size_t(kMaxDims), "{}.shape: at most {} dimensions", field, kMaxDims);
  Shape shape;
  int64_t numel = 1;
  for (size_t i = 0; i < shape_it->size(); ++i) {
    const json& d = (*shape_it)[i];
    SKIFF_CHECK(d.is_number_integer() && d.get<int64_t>() >= 0 && d.get<int64_t>() <= (int64_t(1) << 40),
                "{}.shape[{}]: expected a size in [0, 2^40], got {}", field, i, d.dump());
    SKIFF_CHECK(!__builtin_mul_overflow(numel, d.get<int64_t>(), &numel), "{}.shape: too many elements", field);
    shape.push_back(d.get<int64_t>());
  }
  DType dtype = DType::Float32;
  if (auto it = value.find("dtype"); it != value.end() && !it->is_null()) {
    SKIFF_CHECK(it->is_string(), "{}.dtype: expected a name such as \"float32\"", field);
    try {
      dtype = dtype_from_name(it->get<std::string>());
    } catch (const ValueError& e) {
      SKIFF_THROW(ValueError, "{}.dtype: {}", field, e.what());
    }
  }
  const auto data_it = value.find("data"), b64_it = value.find("b64");
  SKIFF_CHECK((data_it != value.end()) != (b64_it != value.end()), "{}: give exactly one of data and b64", field);
  if (b64_it != value.end()) {
    SKIFF_CHECK(b64_it->is_string(), "{}.b64: expected a base64 string", field);
    const std::string bytes = io::base64_decode(b64_it->get_ref<const std::string&>(), fmt::format("{}.b64", field));
    SKIFF_CHECK(int64_t(bytes.size()) / itemsize(dtype) == numel && int64_t(bytes.size()) % itemsize(dtype) == 0,
                "{}.b64: {} bytes, but shape {} of {} needs {}", field, bytes.size(), shape, dtype_name(dtype),
                numel * itemsize(dtype));
    Tensor t = empty(shape, dtype);
    if (!bytes.empty()) std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
    return t;
  }
  SKIFF_CHECK(has_json_numbers(dtype), "{}: {} tensors travel as b64 (raw bytes), not data", field, dtype_name(dtype));
  SKIFF_CHECK(data_it->is_array(), "{}.data: expected a flat list of numbers", field);
  SKIFF_CHECK(int64_t(data_it->size()) == numel, "{}.data: {} values, but shape {} has {}", field, data_it->size(),
              shape, numel);
  Tensor t = empty(shape, dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_arithmetic_v<T>) {
      T* out = t.data<T>();
      for (size_t i = 0; i < data_it->size(); ++i) out[i] = number_as<T>((*data_it)[i], field, i);
    }
  });
  return t;
}

json tensor_to_json(const Tensor& tensor, bool binary) {
  const Tensor t = tensor.is_contiguous() ? tensor : skiff::detail::contiguous_copy(tensor);
  json out = {{"shape", std::vector<int64_t>(t.shape().begin(), t.shape().end())}, {"dtype", dtype_name(t.dtype())}};
  if (binary || !has_json_numbers(t.dtype())) {
    out["b64"] = io::base64_encode({static_cast<const char*>(t.data_ptr()), size_t(t.nbytes())});
    return out;
  }
  json data = json::array();
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_arithmetic_v<T>) {
      const T* p = t.data<T>();
      for (int64_t i = 0; i < t.numel(); ++i) {
        if constexpr (std::is_floating_point_v<T>) {
          // JSON has no NaN or infinity: they travel as null.
          data.push_back(std::isfinite(p[i]) ? json(p[i]) : json(nullptr));
        } else {
          data.push_back(p[i]);
        }
      }
    }
  });
  out["data"] = std::move(data);
  return out;
}

}  // namespace skiff::serve
