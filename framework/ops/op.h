#pragma once
/// \file op.h
/// How an operator is declared once and run everywhere.
///
/// An OpDef names the op and gives (1) its shape/dtype rule, (2) optionally a
/// view rule for ops that alias their input, and (3) its backward formula,
/// written with other differentiable ops so gradients of gradients work. Kernels
/// are registered separately per (op, device) with a dtype set and a priority
/// (framework/backends/*). call_op() is the single entry point used by eager
/// functions and by the graph engine alike: infer -> allocate -> kernel -> record.
///
///   // framework/ops/elementwise/add.cpp
///   static const OpDef kAdd{.name = "add", .infer = infer_binary, .backward = add_backward};
///   SKIFF_REGISTER_OP(kAdd);
///   Tensor add(const Tensor& a, const Tensor& b) { return call_op1(kAdd, {a, b}); }
///
///   // framework/backends/cpu/kernels/elementwise/add.cpp
///   SKIFF_REGISTER_KERNEL(add, CPU, "cpu", kFloatTypes | kIntTypes, 0, add_cpu);

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff {

// ---- attributes ------------------------------------------------------------------

using AttrValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, std::vector<double>, DType>;

/// Small ordered name -> value map holding an op's non-tensor arguments.
class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> items) : items_(items) {}

  Attrs& set(const std::string& name, AttrValue v);
  bool has(const std::string& name) const { return find(name) != nullptr; }
  int64_t get_int(const std::string& name) const { return get<int64_t>(name); }
  int64_t get_int(const std::string& name, int64_t dflt) const { return has(name) ? get<int64_t>(name) : dflt; }
  double get_float(const std::string& name) const;
  double get_float(const std::string& name, double dflt) const { return has(name) ? get_float(name) : dflt; }
  bool get_bool(const std::string& name, bool dflt = false) const { return has(name) ? get<bool>(name) : dflt; }
  const std::string& get_string(const std::string& name) const { return get<std::string>(name); }
  const std::vector<int64_t>& get_ints(const std::string& name) const { return get<std::vector<int64_t>>(name); }
  const std::vector<double>& get_floats(const std::string& name) const { return get<std::vector<double>>(name); }
  DType get_dtype(const std::string& name) const { return get<DType>(name); }
  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }
  std::string str() const;

 private:
  const AttrValue* find(const std::string& name) const;
  template <typename T>
  const T& get(const std::string& name) const;
  std::vector<std::pair<std::string, AttrValue>> items_;
};

// ---- op definition ---------------------------------------------------------------

struct TensorMeta {
  Shape shape;
  DType dtype = DType::Float32;
};

class BackwardContext;

using InferFn = std::vector<TensorMeta> (*)(const std::vector<Tensor>& inputs, const Attrs& attrs);
using ViewFn = std::vector<Tensor> (*)(const std::vector<Tensor>& inputs, const Attrs& attrs);
/// Returns one gradient per input (undefined = no gradient / not needed).
using BackwardFn = std::vector<Tensor> (*)(BackwardContext& ctx);

struct OpDef {
  std::string name;
  InferFn infer = nullptr;       ///< output metadata; throws ShapeError/TypeError on bad inputs
  ViewFn view = nullptr;         ///< set for ops whose outputs alias inputs (no kernel runs)
  BackwardFn backward = nullptr; ///< null: not differentiable
  uint32_t save_inputs = 0;      ///< bit i set: backward reads input i's values
  uint32_t save_outputs = 0;     ///< bit i set: backward reads output i's values
  int dispatch_input = 0;        ///< whose dtype selects the kernel (-1: first output)
};

/// Registers an OpDef under its name (done once per op by SKIFF_REGISTER_OP).
void register_op(const OpDef& def);
/// Looks an op up by name. \throws NotImplementedError naming the closest registered op.
const OpDef& op_def(const std::string& name);
std::vector<std::string> registered_ops();

#define SKIFF_CONCAT_INNER(a, b) a##b
#define SKIFF_CONCAT(a, b) SKIFF_CONCAT_INNER(a, b)
#define SKIFF_REGISTER_OP(def) \
  static const bool SKIFF_CONCAT(skiff_op_reg_, __LINE__) = (::skiff::register_op(def), true)

// ---- kernels ---------------------------------------------------------------------

struct KernelContext {
  const std::vector<Tensor>& inputs;
  std::vector<Tensor>& outputs;  ///< pre-allocated from infer(); in-place calls pass the target here
  const Attrs& attrs;
};
using KernelFn = void (*)(const KernelContext& ctx);

/// Bit set of DTypes.
using DTypeSet = uint32_t;
constexpr DTypeSet dtype_bit(DType t) { return 1u << uint32_t(t); }
inline constexpr DTypeSet kFloatTypes = dtype_bit(DType::Float32) | dtype_bit(DType::Float64) |
                                        dtype_bit(DType::Float16) | dtype_bit(DType::BFloat16);
inline constexpr DTypeSet kIntTypes = dtype_bit(DType::UInt8) | dtype_bit(DType::Int8) |
                                      dtype_bit(DType::Int32) | dtype_bit(DType::Int64);
inline constexpr DTypeSet kComplexTypes = dtype_bit(DType::Complex64) | dtype_bit(DType::Complex128);
inline constexpr DTypeSet kBoolType = dtype_bit(DType::Bool);
inline constexpr DTypeSet kAllTypes = kFloatTypes | kIntTypes | kComplexTypes | kBoolType;

/// Whether a kernel takes this call (its shapes, attributes, layouts). A kernel that
/// declines is skipped and the next one by priority runs, down to the reference kernel.
using SupportsFn = bool (*)(const KernelContext& ctx);

struct KernelEntry {
  std::string backend;  ///< "cpu", "onednn", "cuda", ...
  DeviceType device;
  DTypeSet dtypes;
  int priority;         ///< higher wins among kernels supporting a dtype
  KernelFn fn;
  SupportsFn supports = nullptr;  ///< null: takes every call of its dtypes
};

void register_kernel(const std::string& op, KernelEntry entry);
/// Best kernel for (op, device, dtype). Backends listed in SKIFF_DISABLE_BACKENDS
/// (comma separated, e.g. "onednn") are skipped.
/// \throws NotImplementedError listing what is registered for the op.
const KernelEntry& find_kernel(const std::string& op, Device device, DType dtype);
/// The kernel that runs this call: the best for (op, device, dtype) whose supports()
/// accepts `ctx`. \throws NotImplementedError as find_kernel, also when every kernel declines.
const KernelEntry& select_kernel(const std::string& op, Device device, DType dtype, const KernelContext& ctx);
/// True when `backend` is listed in SKIFF_DISABLE_BACKENDS (read once per process).
bool backend_disabled(const std::string& backend);
/// All kernels registered for an op (for `skiff info` and registry tests).
std::vector<KernelEntry> kernels_for(const std::string& op);

/// One row of the kernel table: the op name a kernel was registered under and its entry.
struct RegisteredKernel {
  std::string op;  ///< as given to register_kernel (need not name a registered OpDef)
  KernelEntry entry;
};
/// Every registered kernel (device, dtypes, backend), ordered by op name, then
/// priority. Unlike kernels_for() it also lists kernels registered under a name
/// no OpDef has (a typo), which registry tests look for.
std::vector<RegisteredKernel> registered_kernels();

#define SKIFF_REGISTER_KERNEL(op, dev, backend, dtypes, priority, fn)                       \
  static const bool SKIFF_CONCAT(skiff_kernel_reg_, __LINE__) =                             \
      (::skiff::register_kernel(#op, ::skiff::KernelEntry{backend, ::skiff::DeviceType::dev, \
                                                          dtypes, priority, fn}),           \
       true)
/// A kernel that takes only the calls `supports` accepts (the others fall through).
#define SKIFF_REGISTER_KERNEL_IF(op, dev, backend, dtypes, priority, fn, supports)          \
  static const bool SKIFF_CONCAT(skiff_kernel_reg_, __LINE__) =                             \
      (::skiff::register_kernel(#op, ::skiff::KernelEntry{backend, ::skiff::DeviceType::dev, \
                                                          dtypes, priority, fn, supports}), \
       true)

// ---- calling ops -----------------------------------------------------------------

/// Runs an op: infers outputs, allocates them, picks and runs the kernel, and
/// records the autograd node when gradients are being tracked.
std::vector<Tensor> call_op(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs = {});
/// call_op for single-output ops.
Tensor call_op1(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs = {});
/// Runs the op writing into `self` (its first input). Throws if autograd would need
/// to record the write (an input requires grad while grad mode is on).
Tensor& call_op_inplace(const OpDef& op, Tensor& self, const std::vector<Tensor>& inputs, const Attrs& attrs = {});

// ---- op observer (graph tracing) ----------------------------------------------------

namespace detail {

/// Sees every op call_op()/call_op_inplace() runs on one thread: the hook graph
/// tracing (framework/graph/trace.h) records eager code with. While an observer is
/// installed, call_op uninstalls it for the duration of the op and of on_op(), so
/// ops that run other ops inside (kernels, the observer itself) are reported once,
/// at the outermost level. With none installed the cost is one thread-local load.
class OpObserver {
 public:
  virtual ~OpObserver() = default;
  /// Called after the op ran. `inplace`: call_op_inplace wrote the result into
  /// `outputs[0]`, which is `inputs[0]`'s tensor.
  virtual void on_op(const OpDef& op, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                     const Attrs& attrs, bool inplace) = 0;
};

/// The observer installed on this thread (nullptr: none).
OpObserver* op_observer();
/// Installs `observer` (nullptr removes it) on this thread; returns the previous one.
OpObserver* set_op_observer(OpObserver* observer);

}  // namespace detail

// ---- grad mode ---------------------------------------------------------------------

/// Thread-local switch for recording autograd graphs (on by default).
struct GradMode {
  static bool enabled();
  static void set_enabled(bool on);
};

/// RAII scope that disables recording (like torch.no_grad()).
class NoGradGuard {
 public:
  NoGradGuard() : prev_(GradMode::enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
 private:
  bool prev_;
};

/// RAII scope that sets grad mode to a given value.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool on) : prev_(GradMode::enabled()) { GradMode::set_enabled(on); }
  ~GradModeGuard() { GradMode::set_enabled(prev_); }
 private:
  bool prev_;
};

}  // namespace skiff
