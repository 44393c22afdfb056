#pragma once
/// \file shape.h
/// Shape and stride vectors: fixed capacity of kMaxDims, stored inline so that
/// creating a tensor never allocates for its metadata.

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "framework/core/error.h"

namespace skiff {

inline constexpr int kMaxDims = 8;

/// A small vector of int64 with at most kMaxDims entries.
class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }
  template <typename It>
  Shape(It first, It last) { assign(first, last); }
  explicit Shape(const std::vector<int64_t>& v) { assign(v.begin(), v.end()); }

  int64_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  int64_t& operator[](int64_t i) { return d_[i]; }
  int64_t operator[](int64_t i) const { return d_[i]; }
  int64_t* begin() { return d_; }
  int64_t* end() { return d_ + n_; }
  const int64_t* begin() const { return d_; }
  const int64_t* end() const { return d_ + n_; }
  const int64_t* data() const { return d_; }
  int64_t back() const { return d_[n_ - 1]; }

  void push_back(int64_t v) {
    SKIFF_CHECK_SHAPE(n_ < kMaxDims, "shape: at most {} dimensions are supported", kMaxDims);
    d_[n_++] = v;
  }
  void insert(int64_t pos, int64_t v) {
    SKIFF_CHECK_SHAPE(n_ < kMaxDims, "shape: at most {} dimensions are supported", kMaxDims);
    for (int64_t i = n_; i > pos; --i) d_[i] = d_[i - 1];
    d_[pos] = v;
    ++n_;
  }
  void erase(int64_t pos) {
    for (int64_t i = pos; i + 1 < n_; ++i) d_[i] = d_[i + 1];
    --n_;
  }
  void resize(int64_t n, int64_t fill = 0) {
    SKIFF_CHECK_SHAPE(n <= kMaxDims, "shape: at most {} dimensions are supported, got {}", kMaxDims, n);
    for (int64_t i = n_; i < n; ++i) d_[i] = fill;
    n_ = int(n);
  }
  /// Product of the entries (1 for a scalar shape).
  int64_t numel() const {
    int64_t p = 1;
    for (int i = 0; i < n_; ++i) p *= d_[i];
    return p;
  }
  std::vector<int64_t> vec() const { return {begin(), end()}; }
  std::string str() const;

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.n_ == b.n_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  template <typename It>
  void assign(It first, It last) {
    n_ = 0;
    for (; first != last; ++first) push_back(int64_t(*first));
  }
  int64_t d_[kMaxDims] = {};
  int n_ = 0;
};

/// Row-major (C-order) strides, in elements, for a shape.
Shape contiguous_strides(const Shape& shape);
/// Wraps a possibly negative dim into [0, ndim). \throws IndexError naming `what`.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* what = "dim");
/// NumPy broadcast of two shapes. \throws ShapeError naming `op` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast");

}  // namespace skiff

template <>
struct fmt::formatter<skiff::Shape> : fmt::formatter<std::string> {
  auto format(const skiff::Shape& s, fmt::format_context& ctx) const {
    return fmt::formatter<std::string>::format(s.str(), ctx);
  }
};
