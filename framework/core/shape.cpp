#include "framework/core/shape.h"

#include <cstdint>

namespace skiff {

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < n_; ++i) {
    if (i) s += ", ";
    s += std::to_string(d_[i]);
  }
  return s + "]";
}

Shape contiguous_strides(const Shape& shape) {
  Shape st;
  st.resize(shape.size());
  int64_t acc = 1;
  for (int64_t i = shape.size() - 1; i >= 0; --i) {
    st[i] = acc;
    // An empty tensor ([0, 2^50, 2^20]) may have dims whose product passes int64; no element
    // is ever addressed through its strides, so they saturate instead of overflowing.
    if (__builtin_mul_overflow(acc, std::max<int64_t>(shape[i], 1), &acc)) acc = INT64_MAX;
  }
  return st;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* what) {
  int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
  SKIFF_CHECK_INDEX(dim >= lo && dim <= hi, "{}: dimension {} out of range for a tensor with {} dims "
                    "(expected {}..{})", what, dim, ndim, lo, hi);
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  int64_t n = std::max(a.size(), b.size());
  Shape out;
  out.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    SKIFF_CHECK_SHAPE(da == db || da == 1 || db == 1,
                      "{}: shapes {} and {} cannot be broadcast (dim {}: {} vs {})", op, a, b, i, da, db);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace skiff
