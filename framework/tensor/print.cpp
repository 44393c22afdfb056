// Tensor::str(): NumPy-like nested brackets, summarizing large dims with "...".
#include <cmath>
#include <sstream>

#include "framework/tensor/convert.h"
#include "framework/tensor/tensor.h"

namespace skiff {
namespace {

constexpr int64_t kEdgeItems = 3;
constexpr int64_t kSummarizeAbove = 1000;

std::string format_value(const Tensor& t, int64_t elem_offset, bool is_float) {
  return visit_dtype(t.dtype(), [&](auto tag) -> std::string {
    using T = typename decltype(tag)::type;
    T v = static_cast<const T*>(t.data_ptr())[elem_offset];
    if constexpr (detail::is_complex_v<T>) {
      return fmt::format("{:.4g}{:+.4g}j", double(v.real()), double(v.imag()));
    } else if constexpr (std::is_same_v<T, bool>) {
      return v ? "true" : "false";
    } else if constexpr (std::is_integral_v<T>) {
      return fmt::format("{}", int64_t(v));
    } else {
      double d = detail::convert<double>(v);
      return fmt::format("{:.4f}", d);
    }
  });
}

void render(const Tensor& t, int64_t dim, int64_t offset, bool summarize, int indent, std::ostringstream& os) {
  if (dim == t.dim()) {
    os << format_value(t, offset, is_floating(t.dtype()));
    return;
  }
  os << '[';
  int64_t n = t.shape()[dim];
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      os << "...";
      i = n - kEdgeItems - 1;
      os << (dim + 1 == t.dim() ? ", " : ",\n" + std::string(indent + 1, ' '));
      continue;
    }
    render(t, dim + 1, offset + i * t.strides()[dim], summarize, indent + 1, os);
    if (i + 1 < n) os << (dim + 1 == t.dim() ? ", " : ",\n" + std::string(indent + 1, ' '));
  }
  os << ']';
}

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  std::ostringstream os;
  os << "Tensor(";
  if (device().type != DeviceType::CPU) {
    os << "<on " << device().str() << ">";
  } else {
    render(*this, 0, 0, numel() > kSummarizeAbove, 7, os);
  }
  os << ", shape=" << shape().str() << ", dtype=" << dtype_name(dtype());
  if (requires_grad()) os << ", requires_grad=true";
  os << ')';
  return os.str();
}

}  // namespace skiff
