// CPU kernels for sort, topk and one_hot.
//
// sort: each line along dim is copied into a position buffer and ordered with
// std::stable_sort, so equal values keep their original order (ascending or
// descending). topk: std::partial_sort with a strict total order (value, then
// smaller position first), so ties are deterministic. NaN orders above every
// number, like PyTorch. Lines are independent and run in parallel when large.
// one_hot: zero fill, then one write per index after a serial range check.
// Reference: std::sort-based loops in tests/framework/ops/index/sort_test.cpp; exact equality.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "framework/backends/cpu/kernels/index/index_utils.h"

namespace skiff::cpu {
namespace {

// a < b with NaN above every number (NaNs compare equal to each other).
template <typename T>
bool less_nan_last(T a, T b) {
  using A = acc_t<T>;
  if constexpr (std::is_floating_point_v<A>) {
    const bool na = std::isnan(A(a)), nb = std::isnan(A(b));
    if (na || nb) return !na && nb;
  }
  return A(a) < A(b);
}

template <typename Fn>
void visit_sortable(DType t, const char* kernel, Fn&& fn) {
  if (t == DType::Bool) fn(TypeTag<bool>{});
  else visit_real(t, kernel, std::forward<Fn>(fn));
}

// Walks the lines of x along dim; for each, fills `pos` with 0..n-1 ordered by
// `order(pos)`, then writes the first `keep` values and positions.
template <typename T, typename OrderFn>
void select_lines(const KernelContext& c, int64_t keep, OrderFn order) {
  const Tensor &x = c.inputs[0], &values = c.outputs[0], &indices = c.outputs[1];
  const int64_t dim = c.attrs.get_int("dim");
  const int64_t n = x.shape()[dim];
  if (keep == 0 || n == 0) return;
  const int64_t sx = x.strides()[dim], sv = values.strides()[dim], si = indices.strides()[dim];
  const T* xp = static_cast<const T*>(x.data_ptr());
  T* vp = static_cast<T*>(values.data_ptr());
  int64_t* ip = static_cast<int64_t*>(indices.data_ptr());
  for_each_line<3>(x.shape(), dim, {x.strides(), values.strides(), indices.strides()}, [&](const int64_t* off) {
    thread_local std::vector<int64_t> pos;
    thread_local std::vector<T> line;
    pos.resize(size_t(n));
    line.resize(size_t(n));
    for (int64_t k = 0; k < n; ++k) {
      pos[size_t(k)] = k;
      line[size_t(k)] = xp[off[0] + k * sx];
    }
    order(pos, line);
    for (int64_t k = 0; k < keep; ++k) {
      vp[off[1] + k * sv] = line[size_t(pos[size_t(k)])];
      ip[off[2] + k * si] = pos[size_t(k)];
    }
  });
}

void sort_cpu(const KernelContext& c) {
  const bool descending = c.attrs.get_bool("descending");
  visit_sortable(c.inputs[0].dtype(), "sort", [&](auto tag) {
    using T = typename decltype(tag)::type;
    select_lines<T>(c, c.inputs[0].shape()[c.attrs.get_int("dim")],
                    [descending](std::vector<int64_t>& pos, const std::vector<T>& v) {
                      if (descending)
                        std::stable_sort(pos.begin(), pos.end(), [&](int64_t a, int64_t b) {
                          return less_nan_last(v[size_t(b)], v[size_t(a)]);
                        });
                      else
                        std::stable_sort(pos.begin(), pos.end(), [&](int64_t a, int64_t b) {
                          return less_nan_last(v[size_t(a)], v[size_t(b)]);
                        });
                    });
  });
}

void topk_cpu(const KernelContext& c) {
  const bool largest = c.attrs.get_bool("largest");
  const int64_t k = c.attrs.get_int("k");
  visit_sortable(c.inputs[0].dtype(), "topk", [&](auto tag) {
    using T = typename decltype(tag)::type;
    select_lines<T>(c, k, [largest, k](std::vector<int64_t>& pos, const std::vector<T>& v) {
      auto before = [&](int64_t a, int64_t b) {
        const T va = v[size_t(a)], vb = v[size_t(b)];
        const bool first = largest ? less_nan_last(vb, va) : less_nan_last(va, vb);
        const bool second = largest ? less_nan_last(va, vb) : less_nan_last(vb, va);
        return first || (!second && a < b);
      };
      std::partial_sort(pos.begin(), pos.begin() + k, pos.end(), before);
    });
  });
}

void one_hot_cpu(const KernelContext& c) {
  const Tensor& out = c.outputs[0];
  const int64_t classes = c.attrs.get_int("num_classes");
  Tensor idx = c.inputs[0].is_contiguous() ? c.inputs[0] : detail::contiguous_copy(c.inputs[0]);
  check_index_range(idx, classes, idx.dim(), "one_hot");
  std::memset(out.data_ptr(), 0, size_t(out.nbytes()));
  const int64_t* ip = static_cast<const int64_t*>(idx.data_ptr());
  int64_t* op = static_cast<int64_t*>(out.data_ptr());
  const int64_t n = idx.numel();
  for (int64_t i = 0; i < n; ++i) op[i * classes + ip[i]] = 1;
}

}  // namespace

SKIFF_REGISTER_KERNEL(sort, CPU, "cpu", kFloatTypes | kIntTypes | kBoolType, 0, sort_cpu);
SKIFF_REGISTER_KERNEL(topk, CPU, "cpu", kFloatTypes | kIntTypes | kBoolType, 0, topk_cpu);
SKIFF_REGISTER_KERNEL(one_hot, CPU, "cpu", dtype_bit(DType::Int64), 0, one_hot_cpu);

}  // namespace skiff::cpu
