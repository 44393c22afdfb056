#include "framework/tensor/tensor.h"

#include <algorithm>
#include <cstring>

#include "framework/core/rng.h"
#include "framework/tensor/convert.h"
#include "framework/tensor/strided_loop.h"

namespace skiff {

int64_t Tensor::size(int64_t d) const { return shape()[wrap_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrap_dim(d, dim(), "stride")]; }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (shape()[d] == 1) continue;
    if (strides()[d] != expected) return false;
    // Saturating like contiguous_strides(): an empty tensor's dims may multiply past int64.
    if (__builtin_mul_overflow(expected, shape()[d], &expected)) expected = INT64_MAX;
  }
  return true;
}

Tensor& Tensor::set_requires_grad(bool r) {
  if (r) {
    SKIFF_CHECK_DTYPE(is_differentiable(dtype()), "set_requires_grad: only float and complex tensors can "
                      "require gradients, got {}", dtype_name(dtype()));
    impl().autograd().requires_grad = true;
  } else {
    SKIFF_CHECK(is_leaf(), "set_requires_grad(false): only leaves can be changed; use detach() on {}",
                "a non-leaf tensor");
    if (impl().autograd_) impl().autograd_->requires_grad = false;
  }
  return *this;
}

Tensor Tensor::grad() const {
  if (!impl().autograd_ || !impl().autograd_->grad) return Tensor();
  return Tensor(impl().autograd_->grad);
}

void Tensor::set_grad(const Tensor& g) {
  if (g.defined())
    SKIFF_CHECK_SHAPE(g.shape() == shape(), "set_grad: gradient shape {} does not match tensor shape {}",
                      g.shape(), shape());
  impl().autograd().grad = g.impl_ptr();
}

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<autograd::Node> none;
  return impl().autograd_ ? impl().autograd_->grad_fn : none;
}

// retain_grad() and register_hook() live in framework/ops/node.cpp: they need autograd::Node.

template <typename T>
T Tensor::item() const {
  SKIFF_CHECK(numel() == 1, "item: expected a tensor with one element, got shape {}", shape());
  SKIFF_CHECK_T(NotImplementedError, device().type == DeviceType::CPU, "item: tensor on {} must be copied "
                "to the CPU first", device().str());
  return visit_dtype(dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    return detail::convert<T>(*static_cast<const S*>(data_ptr()));
  });
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  if constexpr (std::is_same_v<T, bool>) {  // vector<bool> has no contiguous storage
    std::vector<uint8_t> bytes = to_vector<uint8_t>();
    return std::vector<bool>(bytes.begin(), bytes.end());
  } else {
    std::vector<T> out(static_cast<size_t>(numel()));
    if (out.empty()) return out;
    Tensor dst = from_blob(out.data(), shape(), dtype_of<T>);
    detail::copy_into(dst, *this);
    return out;
  }
}

#define SKIFF_INSTANTIATE_ITEM(T) \
  template T Tensor::item<T>() const; \
  template std::vector<T> Tensor::to_vector<T>() const;
SKIFF_INSTANTIATE_ITEM(bool)
SKIFF_INSTANTIATE_ITEM(uint8_t)
SKIFF_INSTANTIATE_ITEM(int8_t)
SKIFF_INSTANTIATE_ITEM(int32_t)
SKIFF_INSTANTIATE_ITEM(int64_t)
SKIFF_INSTANTIATE_ITEM(Half)
SKIFF_INSTANTIATE_ITEM(BFloat16)
SKIFF_INSTANTIATE_ITEM(float)
SKIFF_INSTANTIATE_ITEM(double)
SKIFF_INSTANTIATE_ITEM(complex64)
SKIFF_INSTANTIATE_ITEM(complex128)
#undef SKIFF_INSTANTIATE_ITEM

// ---- creation --------------------------------------------------------------------

Tensor empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t d : shape) SKIFF_CHECK_SHAPE(d >= 0, "empty: negative dimension in shape {}", shape);
  // Shapes come from files too: a product past int64 is refused, not wrapped around.
  int64_t nbytes = itemsize(dtype);
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) nbytes = 0;
  else
    for (int64_t d : shape)
      SKIFF_CHECK_T(DeviceError, !__builtin_mul_overflow(nbytes, d, &nbytes),
                    "empty: a tensor of shape {} and dtype {} is larger than any memory", shape, dtype_name(dtype));
  auto storage = Storage::allocate(nbytes, device);
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), shape, contiguous_strides(shape), 0, dtype));
}

Tensor zeros(const Shape& shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  std::memset(t.data_ptr(), 0, size_t(t.nbytes()));
  return t;
}

Tensor ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1.0, dtype, device); }

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  detail::fill(t, value);
  return t;
}

Tensor scalar_tensor(double value, DType dtype) { return full(Shape{}, value, dtype); }

Tensor scalar_tensor(std::complex<double> value, DType dtype) {
  Tensor t = empty(Shape{}, dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    *t.data<T>() = detail::convert<T>(value);
  });
  return t;
}

Tensor arange(double start, double end, double step, DType dtype) {
  SKIFF_CHECK(step != 0, "arange: step must be non-zero");
  int64_t n = std::max<int64_t>(0, int64_t(std::ceil((end - start) / step)));
  Tensor t = empty(Shape{n}, dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = detail::convert<T>(start + double(i) * step);
  });
  return t;
}

Tensor linspace(double start, double end, int64_t steps, DType dtype) {
  SKIFF_CHECK(steps >= 0, "linspace: steps must be >= 0, got {}", steps);
  Tensor t = empty(Shape{steps}, dtype);
  double h = steps > 1 ? (end - start) / double(steps - 1) : 0.0;
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    // Fill from both ends so the last value is exactly `end`.
    for (int64_t i = 0; i < steps; ++i)
      p[i] = detail::convert<T>(i < steps / 2 ? start + h * double(i) : end - h * double(steps - 1 - i));
  });
  return t;
}

Tensor eye(int64_t n, int64_t m, DType dtype) {
  if (m < 0) m = n;
  Tensor t = zeros(Shape{n, m}, dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = detail::convert<T>(1.0);
  });
  return t;
}

// Random draws run on the calling thread in index order: same seed -> same tensor,
// whatever the thread count.
Tensor rand(const Shape& shape, DType dtype, Generator* gen, double low, double high) {
  Generator& g = gen ? *gen : default_generator();
  Tensor t = empty(shape, dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = detail::convert<T>(low + (high - low) * g.uniform());
  });
  return t;
}

Tensor randn(const Shape& shape, DType dtype, Generator* gen, double mean, double std) {
  Generator& g = gen ? *gen : default_generator();
  Tensor t = empty(shape, dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = detail::convert<T>(mean + std * g.normal());
  });
  return t;
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Generator* gen) {
  SKIFF_CHECK(high > low, "randint: expected low < high, got [{}, {})", low, high);
  Generator& g = gen ? *gen : default_generator();
  Tensor t = empty(shape, dtype);
  uint64_t range = uint64_t(high - low);
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i)
      p[i] = detail::convert<T>(low + int64_t(g.next_u64() % range));
  });
  return t;
}

Tensor randperm(int64_t n, Generator* gen) {
  Generator& g = gen ? *gen : default_generator();
  Tensor t = arange(n);
  int64_t* p = t.data<int64_t>();
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[g.next_u64() % uint64_t(i + 1)]);
  return t;
}

template <typename T>
Tensor from_vector(const std::vector<T>& data, const Shape& shape) {
  SKIFF_CHECK_SHAPE(int64_t(data.size()) == shape.numel(), "from_vector: {} values do not fill shape {}",
                    data.size(), shape);
  Tensor t = empty(shape, dtype_of<T>);
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < data.size(); ++i) t.data<bool>()[i] = data[i];
  } else if (!data.empty()) {  // an empty vector's data() may be null, which memcpy must not get
    std::memcpy(t.data_ptr(), data.data(), data.size() * sizeof(T));
  }
  return t;
}
template Tensor from_vector(const std::vector<bool>&, const Shape&);
template Tensor from_vector(const std::vector<uint8_t>&, const Shape&);
template Tensor from_vector(const std::vector<int8_t>&, const Shape&);
template Tensor from_vector(const std::vector<int32_t>&, const Shape&);
template Tensor from_vector(const std::vector<int64_t>&, const Shape&);
template Tensor from_vector(const std::vector<Half>&, const Shape&);
template Tensor from_vector(const std::vector<BFloat16>&, const Shape&);
template Tensor from_vector(const std::vector<float>&, const Shape&);
template Tensor from_vector(const std::vector<double>&, const Shape&);
template Tensor from_vector(const std::vector<complex64>&, const Shape&);
template Tensor from_vector(const std::vector<complex128>&, const Shape&);

Tensor from_blob(void* data, const Shape& shape, DType dtype, std::function<void(void*)> deleter, Device device) {
  auto storage = std::make_shared<Storage>(data, shape.numel() * itemsize(dtype), device, std::move(deleter));
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), shape, contiguous_strides(shape), 0, dtype));
}

// ---- raw helpers -----------------------------------------------------------------
namespace detail {

Tensor make_view(const Tensor& t, const Shape& shape, const Shape& strides, int64_t offset) {
  SKIFF_ASSERT(shape.size() == strides.size(), "view rank mismatch {} vs {}", shape, strides);
  return Tensor(std::make_shared<TensorImpl>(t.storage(), shape, strides, offset, t.dtype()));
}

void copy_into(const Tensor& dst, const Tensor& src) {
  Shape bshape = broadcast_shapes(dst.shape(), src.shape(), "copy");
  SKIFF_CHECK_SHAPE(bshape == dst.shape(), "copy: cannot broadcast source {} to destination {}", src.shape(),
                    dst.shape());
  std::array<Shape, 2> st = {broadcast_byte_strides(dst, dst.shape()), broadcast_byte_strides(src, dst.shape())};
  std::array<char*, 2> base = {static_cast<char*>(dst.data_ptr()), static_cast<char*>(src.data_ptr())};
  visit_dtype(dst.dtype(), [&](auto dtag) {
    using D = typename decltype(dtag)::type;
    visit_dtype(src.dtype(), [&](auto stag) {
      using S = typename decltype(stag)::type;
      for_each_strided<2>(dst.shape(), base, st, [](char** p, const int64_t* s, int64_t n) {
        if constexpr (std::is_same_v<D, S>) {
          // Same type, both runs contiguous: memcpy (about twice the element loop's speed on runs
          // of megabytes, e.g. a channel concat of feature maps).
          if (s[0] == int64_t(sizeof(D)) && s[1] == int64_t(sizeof(S))) {
            std::memcpy(p[0], p[1], size_t(n) * sizeof(D));
            return;
          }
        }
        if (s[0] == int64_t(sizeof(D)) && s[1] == int64_t(sizeof(S))) {
          D* d = reinterpret_cast<D*>(p[0]);
          const S* x = reinterpret_cast<const S*>(p[1]);
          for (int64_t i = 0; i < n; ++i) d[i] = convert<D>(x[i]);
        } else {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<D*>(p[0] + i * s[0]) = convert<D>(*reinterpret_cast<const S*>(p[1] + i * s[1]));
        }
      });
    });
  });
  dst.storage()->bump_version();
}

Tensor contiguous_copy(const Tensor& t) {
  Tensor out = empty(t.shape(), t.dtype(), t.device());
  copy_into(out, t);
  return out;
}

Tensor cast(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = empty(t.shape(), dtype, t.device());
  copy_into(out, t);
  return out;
}

void fill(const Tensor& t, double value) {
  std::array<Shape, 1> st = {broadcast_byte_strides(t, t.shape())};
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = convert<T>(value);
    for_each_strided<1>(t.shape(), {static_cast<char*>(t.data_ptr())}, st, [&](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
    });
  });
  t.storage()->bump_version();
}

}  // namespace detail
}  // namespace skiff
