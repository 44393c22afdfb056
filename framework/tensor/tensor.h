#pragma once
/// \file tensor.h
/// Tensor: a cheap, reference-counted handle to a strided view of a Storage.
///
/// Copying a Tensor copies the handle, not the data (like torch.Tensor). Views
/// (reshape, permute, slice, expand, ...) share storage with their base. All
/// math lives in free functions declared under framework/ops/; this header only
/// holds metadata, element access and the autograd slots that ops fill in.

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/device.h"
#include "framework/core/dtype.h"
#include "framework/core/error.h"
#include "framework/core/shape.h"
#include "framework/tensor/storage.h"

namespace skiff {

namespace autograd {
struct Node;
}

class Tensor;

/// Autograd state of a tensor. Kept out of TensorImpl's hot fields.
struct AutogradMeta {
  bool requires_grad = false;
  bool retains_grad = false;
  std::shared_ptr<autograd::Node> grad_fn;       ///< producer node; null for leaves
  int output_nr = 0;                             ///< which output of grad_fn this is
  std::weak_ptr<autograd::Node> grad_accumulator;///< leaves: node that accumulates .grad
  std::shared_ptr<class TensorImpl> grad;        ///< accumulated gradient
  std::vector<std::function<Tensor(const Tensor&)>> hooks;  ///< run on the incoming gradient
  /// Leaves: run once per backward pass after .grad has been updated.
  std::vector<std::function<void(const Tensor&)>> post_accumulate_hooks;
};

class TensorImpl {
 public:
  TensorImpl(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset, DType dtype)
      : storage_(std::move(storage)), shape_(shape), strides_(strides), offset_(offset), dtype_(dtype) {}

  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Shape strides_;   ///< in elements
  int64_t offset_;  ///< in elements
  DType dtype_;
  std::unique_ptr<AutogradMeta> autograd_;

  AutogradMeta& autograd() {
    if (!autograd_) autograd_ = std::make_unique<AutogradMeta>();
    return *autograd_;
  }
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  /// False for a default-constructed handle (used for "no gradient").
  bool defined() const { return impl_ != nullptr; }

  const Shape& shape() const { return impl().shape_; }
  const Shape& strides() const { return impl().strides_; }
  int64_t dim() const { return impl().shape_.size(); }
  /// Size of dimension d (negative d counts from the end). \throws IndexError.
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t numel() const { return impl().shape_.numel(); }
  int64_t offset() const { return impl().offset_; }
  DType dtype() const { return impl().dtype_; }
  Device device() const { return impl().storage_->device(); }
  int64_t itemsize() const { return skiff::itemsize(dtype()); }
  int64_t nbytes() const { return numel() * itemsize(); }
  bool is_contiguous() const;
  /// True if both handles refer to the same TensorImpl.
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  const std::shared_ptr<Storage>& storage() const { return impl().storage_; }
  /// Address of element 0 of this view.
  void* data_ptr() const {
    return static_cast<char*>(impl().storage_->data()) + impl().offset_ * itemsize();
  }
  /// Typed pointer to element 0. \throws TypeError if T does not match dtype().
  template <typename T>
  T* data() const {
    SKIFF_CHECK_DTYPE(dtype_of<T> == dtype(), "tensor.data: requested {}, tensor holds {}",
                      dtype_name(dtype_of<T>), dtype_name(dtype()));
    return static_cast<T*>(data_ptr());
  }

  /// Value of a one-element tensor, converted to T. \throws ValueError if numel() != 1.
  template <typename T>
  T item() const;
  /// All elements, in row-major order, converted to T (handy in tests).
  template <typename T>
  std::vector<T> to_vector() const;

  // ---- autograd slots --------------------------------------------------------
  bool requires_grad() const { return impl().autograd_ && impl().autograd_->requires_grad; }
  /// Marks a leaf as requiring gradients. \throws TypeError for non-float dtypes.
  Tensor& set_requires_grad(bool r = true);
  /// Accumulated gradient (undefined until backward() reaches this tensor).
  Tensor grad() const;
  void set_grad(const Tensor& g);
  /// Leaves are tensors not produced by a recorded op.
  bool is_leaf() const { return !impl().autograd_ || !impl().autograd_->grad_fn; }
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  int output_nr() const { return impl().autograd_ ? impl().autograd_->output_nr : 0; }
  /// Keep .grad for this non-leaf tensor during backward().
  void retain_grad();
  /// Registers fn to transform the gradient flowing into this tensor.
  void register_hook(std::function<Tensor(const Tensor&)> fn);
  /// Leaves only: calls fn(this tensor) each time a backward pass has finished updating
  /// its .grad (once per pass), e.g. to start reducing that gradient across processes
  /// while the rest of the pass runs. \throws ValueError for a non-leaf.
  void register_post_accumulate_grad_hook(std::function<void(const Tensor&)> fn);

  /// Readable multi-line rendering with dtype and shape.
  std::string str() const;

  TensorImpl& impl() const {
    SKIFF_CHECK(impl_ != nullptr, "tensor: operation on an undefined tensor");
    return *impl_;
  }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// ---- creation (no autograd: results are leaves) ------------------------------

/// Uninitialized contiguous tensor.
Tensor empty(const Shape& shape, DType dtype = DType::Float32, Device device = kCPU);
Tensor zeros(const Shape& shape, DType dtype = DType::Float32, Device device = kCPU);
Tensor ones(const Shape& shape, DType dtype = DType::Float32, Device device = kCPU);
/// Every element equal to `value` (converted to dtype).
Tensor full(const Shape& shape, double value, DType dtype = DType::Float32, Device device = kCPU);
/// A 0-dimensional tensor holding one value.
Tensor scalar_tensor(double value, DType dtype = DType::Float32);
Tensor scalar_tensor(std::complex<double> value, DType dtype = DType::Complex64);
/// [start, start+step, ...) up to end (exclusive), like numpy.arange.
Tensor arange(double start, double end, double step = 1.0, DType dtype = DType::Int64);
inline Tensor arange(int64_t end, DType dtype = DType::Int64) { return arange(0.0, double(end), 1.0, dtype); }
/// `steps` evenly spaced values from start to end inclusive.
Tensor linspace(double start, double end, int64_t steps, DType dtype = DType::Float32);
/// n x m identity (m defaults to n).
Tensor eye(int64_t n, int64_t m = -1, DType dtype = DType::Float32);

class Generator;
/// Uniform [low, high) draws from `gen` (default generator when null).
Tensor rand(const Shape& shape, DType dtype = DType::Float32, Generator* gen = nullptr, double low = 0.0,
            double high = 1.0);
/// Standard normal draws times std plus mean.
Tensor randn(const Shape& shape, DType dtype = DType::Float32, Generator* gen = nullptr, double mean = 0.0,
             double std = 1.0);
/// Integers uniformly drawn from [low, high).
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype = DType::Int64,
               Generator* gen = nullptr);
/// A random permutation of 0..n-1 (int64).
Tensor randperm(int64_t n, Generator* gen = nullptr);

/// Copies `data` (row-major) into a new tensor of `shape`. \throws ShapeError on a size mismatch.
template <typename T>
Tensor from_vector(const std::vector<T>& data, const Shape& shape);
template <typename T>
Tensor from_vector(const std::vector<T>& data) { return from_vector(data, Shape{int64_t(data.size())}); }
/// Wraps external memory without copying. `deleter` (may be empty) runs when the
/// last view dies; the caller guarantees the memory outlives the tensor otherwise.
Tensor from_blob(void* data, const Shape& shape, DType dtype, std::function<void(void*)> deleter = {},
                 Device device = kCPU);

// ---- raw (non-recording) helpers used by ops and kernels ----------------------
namespace detail {
/// A view sharing `t`'s storage with new metadata. No bounds checks beyond an assert.
Tensor make_view(const Tensor& t, const Shape& shape, const Shape& strides, int64_t offset);
/// Element-wise copy with dtype conversion and broadcasting of src to dst's shape.
void copy_into(const Tensor& dst, const Tensor& src);
/// A fresh contiguous copy (no autograd).
Tensor contiguous_copy(const Tensor& t);
/// Converts without recording autograd; returns `t` itself when nothing changes.
Tensor cast(const Tensor& t, DType dtype);
/// Sets every element to value.
void fill(const Tensor& t, double value);
}  // namespace detail

}  // namespace skiff
