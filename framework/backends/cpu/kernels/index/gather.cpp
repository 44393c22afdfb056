// CPU kernels for gather, scatter, scatter_add, index_select, index_add and embedding.
//
// Algorithm: indices are range-checked serially first (IndexError before any
// parallel loop). gather/scatter walk the 1-D lines of the index tensor along dim
// with arbitrary strides; different lines touch disjoint output lines, so lines
// run in parallel and duplicate indices inside a line are applied in order (the
// last write wins for scatter; additions happen in index order for scatter_add).
// index_select/embedding view x as contiguous [pre, N, post] and copy whole rows;
// index_add splits [pre, post] into column blocks and adds rows in index order, so
// results do not depend on the thread count.
// Reference: naive loops in tests/framework/ops/index/gather_test.cpp; exact
// equality is tested (pure data movement; float additions in a fixed order).
#include <cstring>

#include "framework/backends/cpu/kernels/index/index_utils.h"

namespace skiff::cpu {
namespace {

int64_t size_at(const Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.shape()[dim]; }

void gather_cpu(const KernelContext& c) {
  const Tensor &x = c.inputs[0], &index = c.inputs[1], &out = c.outputs[0];
  const int64_t dim = c.attrs.get_int("dim");
  check_index_range(index, size_at(x, dim), dim, "gather");
  const int64_t len = size_at(index, dim);
  const int64_t so = dim_stride(out, dim), sx = dim_stride(x, dim), si = dim_stride(index, dim);
  const int64_t* ip = static_cast<const int64_t*>(index.data_ptr());
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* op = static_cast<T*>(out.data_ptr());
    for_each_line<3>(index.shape(), dim, {out.strides(), x.strides(), index.strides()}, [&](const int64_t* off) {
      for (int64_t k = 0; k < len; ++k) op[off[0] + k * so] = xp[off[1] + ip[off[2] + k * si] * sx];
    });
  });
}

// out = x, then out[line, index[k]] (op)= src[line, k] for every line of index.
template <bool kAccumulate>
void scatter_impl(const KernelContext& c, const char* name) {
  const Tensor &x = c.inputs[0], &index = c.inputs[1], &src = c.inputs[2], &out = c.outputs[0];
  const int64_t dim = c.attrs.get_int("dim");
  check_index_range(index, size_at(x, dim), dim, name);
  detail::copy_into(out, x);
  const int64_t len = size_at(index, dim);
  const int64_t so = dim_stride(out, dim), ss = dim_stride(src, dim), si = dim_stride(index, dim);
  const int64_t* ip = static_cast<const int64_t*>(index.data_ptr());
  auto body = [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    const T* sp = static_cast<const T*>(src.data_ptr());
    T* op = static_cast<T*>(out.data_ptr());
    for_each_line<3>(index.shape(), dim, {out.strides(), src.strides(), index.strides()}, [&](const int64_t* off) {
      for (int64_t k = 0; k < len; ++k) {
        T& dst = op[off[0] + ip[off[2] + k * si] * so];
        const T v = sp[off[1] + k * ss];
        if constexpr (kAccumulate) dst = detail::convert<T>(A(dst) + A(v));
        else dst = v;
      }
    });
  };
  if constexpr (kAccumulate) visit_numeric(x.dtype(), name, body);
  else visit_dtype(x.dtype(), body);
}
void scatter_cpu(const KernelContext& c) { scatter_impl<false>(c, "scatter"); }
void scatter_add_cpu(const KernelContext& c) { scatter_impl<true>(c, "scatter_add"); }

// x viewed as [pre, n, post] around dim.
struct RowLayout {
  int64_t pre = 1, n = 1, post = 1;
};
RowLayout row_layout(const Shape& s, int64_t dim) {
  RowLayout L;
  for (int64_t d = 0; d < s.size(); ++d) {
    if (d < dim) L.pre *= s[d];
    else if (d == dim) L.n = s[d];
    else L.post *= s[d];
  }
  return L;
}

Tensor contiguous_index(const Tensor& index) {
  return index.is_contiguous() ? index : detail::contiguous_copy(index);
}

// out [pre, K, post] = x [pre, n, post] rows picked by index (K entries). Copies bytes.
void select_rows(const Tensor& out, const Tensor& x_any, int64_t dim, const Tensor& index, const char* name) {
  Tensor idx = contiguous_index(index);
  const RowLayout L = row_layout(x_any.shape(), dim);
  check_index_range(idx, L.n, dim, name);
  Tensor x = x_any.is_contiguous() ? x_any : detail::contiguous_copy(x_any);
  const int64_t k_rows = idx.numel();
  const int64_t* ip = static_cast<const int64_t*>(idx.data_ptr());
  const size_t row_bytes = size_t(L.post * x.itemsize());
  const char* xp = static_cast<const char*>(x.data_ptr());
  char* op = static_cast<char*>(out.data_ptr());
  const int64_t rows = L.pre * k_rows;
  const bool par = rows > 1 && rows * L.post >= kParallelGrain && num_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t p = r / k_rows, k = r % k_rows;
    std::memcpy(op + r * row_bytes, xp + (p * L.n + ip[k]) * row_bytes, row_bytes);
  }
}

void index_select_cpu(const KernelContext& c) {
  select_rows(c.outputs[0], c.inputs[0], c.attrs.get_int("dim"), c.inputs[1], "index_select");
}

void embedding_cpu(const KernelContext& c) { select_rows(c.outputs[0], c.inputs[0], 0, c.inputs[1], "embedding"); }

// out = x; out[p, index[i], q] += src[p, i, q], with i in order for each (p, q).
void index_add_cpu(const KernelContext& c) {
  const Tensor &x = c.inputs[0], &out = c.outputs[0];
  const int64_t dim = c.attrs.get_int("dim");
  Tensor idx = contiguous_index(c.inputs[1]);
  const RowLayout L = row_layout(x.shape(), dim);
  check_index_range(idx, L.n, dim, "index_add");
  detail::copy_into(out, x);
  Tensor src = c.inputs[2].is_contiguous() ? c.inputs[2] : detail::contiguous_copy(c.inputs[2]);
  const int64_t k_rows = idx.numel();
  const int64_t* ip = static_cast<const int64_t*>(idx.data_ptr());
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (L.post + kBlock - 1) / kBlock;
  const int64_t tasks = L.pre * blocks;
  visit_numeric(x.dtype(), "index_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    const T* sp = static_cast<const T*>(src.data_ptr());
    T* op = static_cast<T*>(out.data_ptr());
    const bool par = tasks > 1 && k_rows * L.pre * L.post >= kParallelGrain && num_threads() > 1 &&
                     !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t p = t / blocks, q0 = (t % blocks) * kBlock, q1 = std::min(L.post, q0 + kBlock);
      for (int64_t i = 0; i < k_rows; ++i) {
        T* dst = op + (p * L.n + ip[i]) * L.post;
        const T* row = sp + (p * k_rows + i) * L.post;
        for (int64_t q = q0; q < q1; ++q) dst[q] = detail::convert<T>(A(dst[q]) + A(row[q]));
      }
    }
  });
}

}  // namespace

SKIFF_REGISTER_KERNEL(gather, CPU, "cpu", kAllTypes, 0, gather_cpu);
SKIFF_REGISTER_KERNEL(scatter, CPU, "cpu", kAllTypes, 0, scatter_cpu);
SKIFF_REGISTER_KERNEL(scatter_add, CPU, "cpu", kFloatTypes | kIntTypes | kComplexTypes, 0, scatter_add_cpu);
SKIFF_REGISTER_KERNEL(index_select, CPU, "cpu", kAllTypes, 0, index_select_cpu);
SKIFF_REGISTER_KERNEL(embedding, CPU, "cpu", kAllTypes, 0, embedding_cpu);
SKIFF_REGISTER_KERNEL(index_add, CPU, "cpu", kFloatTypes | kIntTypes | kComplexTypes, 0, index_add_cpu);

}  // namespace skiff::cpu
