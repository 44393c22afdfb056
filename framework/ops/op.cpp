#include "framework/ops/op.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <string_view>

#include "framework/core/registry.h"
#include "framework/ops/node.h"

namespace skiff {

// ---- Attrs -------------------------------------------------------------------------

Attrs& Attrs::set(const std::string& name, AttrValue v) {
  for (auto& [k, val] : items_)
    if (k == name) { val = std::move(v); return *this; }
  items_.emplace_back(name, std::move(v));
  return *this;
}

const AttrValue* Attrs::find(const std::string& name) const {
  for (const auto& [k, v] : items_)
    if (k == name) return &v;
  return nullptr;
}

template <typename T>
const T& Attrs::get(const std::string& name) const {
  const AttrValue* v = find(name);
  SKIFF_ASSERT(v != nullptr, "op attribute '{}' is missing", name);
  const T* p = std::get_if<T>(v);
  SKIFF_ASSERT(p != nullptr, "op attribute '{}' has another type", name);
  return *p;
}

template const int64_t& Attrs::get<int64_t>(const std::string&) const;
template const double& Attrs::get<double>(const std::string&) const;
template const bool& Attrs::get<bool>(const std::string&) const;
template const std::string& Attrs::get<std::string>(const std::string&) const;
template const std::vector<int64_t>& Attrs::get<std::vector<int64_t>>(const std::string&) const;
template const std::vector<double>& Attrs::get<std::vector<double>>(const std::string&) const;
template const DType& Attrs::get<DType>(const std::string&) const;

double Attrs::get_float(const std::string& name) const {
  const AttrValue* v = find(name);
  SKIFF_ASSERT(v != nullptr, "op attribute '{}' is missing", name);
  if (auto* i = std::get_if<int64_t>(v)) return double(*i);
  return get<double>(name);
}

std::string Attrs::str() const {
  std::ostringstream os;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (i) os << ", ";
    os << items_[i].first << '=';
    std::visit([&](const auto& v) {
      using V = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<V, std::vector<int64_t>> || std::is_same_v<V, std::vector<double>>)
        os << fmt::format("[{}]", fmt::join(v, ", "));
      else if constexpr (std::is_same_v<V, DType>)
        os << dtype_name(v);
      else
        os << v;
    }, items_[i].second);
  }
  return os.str();
}

// ---- registries ----------------------------------------------------------------------

namespace {

struct OpTables {
  std::mutex mu;
  std::map<std::string, const OpDef*> ops;
  std::map<std::string, std::vector<KernelEntry>> kernels;
};

OpTables& tables() {
  static auto* t = new OpTables();  // leaked: used during static init of other libraries
  return *t;
}

}  // namespace

bool backend_disabled(const std::string& backend) {
  static const std::string disabled = [] {
    const char* s = std::getenv("SKIFF_DISABLE_BACKENDS");
    return s ? "," + std::string(s) + "," : std::string();
  }();
  return !disabled.empty() && disabled.find("," + backend + ",") != std::string::npos;
}

void register_op(const OpDef& def) {
  auto& t = tables();
  std::lock_guard<std::mutex> lock(t.mu);
  SKIFF_ASSERT(!t.ops.count(def.name), "op '{}' registered twice", def.name);
  t.ops[def.name] = &def;
}

const OpDef& op_def(const std::string& name) {
  auto& t = tables();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.ops.find(name);
  if (it != t.ops.end()) return *it->second;
  std::vector<std::string> names;
  for (const auto& [k, v] : t.ops) names.push_back(k);
  auto hint = closest_match(name, names);
  SKIFF_THROW(NotImplementedError, "no op named '{}'{}", name,
              hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint));
}

std::vector<std::string> registered_ops() {
  auto& t = tables();
  std::lock_guard<std::mutex> lock(t.mu);
  std::vector<std::string> out;
  for (const auto& [k, v] : t.ops) out.push_back(k);
  return out;
}

void register_kernel(const std::string& op, KernelEntry entry) {
  auto& t = tables();
  std::lock_guard<std::mutex> lock(t.mu);
  auto& list = t.kernels[op];
  list.push_back(std::move(entry));
  std::stable_sort(list.begin(), list.end(), [](const KernelEntry& a, const KernelEntry& b) {
    return a.priority > b.priority;
  });
}

namespace {

// The first kernel for (device, dtype) in priority order that `takes` (nullptr: none),
// and the error naming what is registered when there is none.
template <typename Takes>
const KernelEntry* first_kernel(const std::string& op, Device device, DType dtype, Takes takes) {
  auto& t = tables();
  // Registration finishes before main(); lookups after that only read.
  auto it = t.kernels.find(op);
  if (it == t.kernels.end()) return nullptr;
  for (const auto& k : it->second)
    if (k.device == device.type && (k.dtypes & dtype_bit(dtype)) && !backend_disabled(k.backend) && takes(k))
      return &k;
  return nullptr;
}

[[noreturn]] void no_kernel(const std::string& op, Device device, DType dtype, bool declined) {
  std::string have;
  for (const auto& k : kernels_for(op)) {
    std::string types;
    for (int d = 0; d < kNumDTypes; ++d)
      if (k.dtypes & dtype_bit(DType(d))) types += (types.empty() ? "" : ",") + std::string(dtype_name(DType(d)));
    have += fmt::format(" {}({}: {})", k.backend, Device{k.device, 0}.str(), types);
  }
  SKIFF_THROW(NotImplementedError, "{}: no kernel for dtype {} on {}{}; registered:{}", op, dtype_name(dtype),
              device.str(), declined ? " takes this call" : "", have.empty() ? " none" : have);
}

}  // namespace

const KernelEntry& find_kernel(const std::string& op, Device device, DType dtype) {
  if (auto* k = first_kernel(op, device, dtype, [](const KernelEntry&) { return true; })) return *k;
  no_kernel(op, device, dtype, false);
}

const KernelEntry& select_kernel(const std::string& op, Device device, DType dtype, const KernelContext& ctx) {
  auto takes = [&](const KernelEntry& k) { return !k.supports || k.supports(ctx); };
  if (auto* k = first_kernel(op, device, dtype, takes)) return *k;
  no_kernel(op, device, dtype, first_kernel(op, device, dtype, [](const KernelEntry&) { return true; }) != nullptr);
}

std::vector<KernelEntry> kernels_for(const std::string& op) {
  auto& t = tables();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.kernels.find(op);
  return it == t.kernels.end() ? std::vector<KernelEntry>{} : it->second;
}

std::vector<RegisteredKernel> registered_kernels() {
  auto& t = tables();
  std::lock_guard<std::mutex> lock(t.mu);
  std::vector<RegisteredKernel> out;
  for (const auto& [op, list] : t.kernels)
    for (const auto& k : list) out.push_back({op, k});
  return out;
}

// ---- grad mode ---------------------------------------------------------------------------

static thread_local bool t_grad_enabled = true;
bool GradMode::enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool on) { t_grad_enabled = on; }

// ---- call_op -------------------------------------------------------------------------------

namespace {

void check_inputs(const OpDef& op, const std::vector<Tensor>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    SKIFF_CHECK(inputs[i].defined(), "{}: input {} is an undefined tensor", op.name, i);
    if (i > 0)
      SKIFF_CHECK_T(DeviceError, inputs[i].device() == inputs[0].device(),
                    "{}: expected all inputs on one device, got {} (input 0) and {} (input {})", op.name,
                    inputs[0].device().str(), inputs[i].device().str(), i);
  }
}

bool any_requires_grad(const std::vector<Tensor>& inputs) {
  for (const auto& t : inputs)
    if (t.requires_grad()) return true;
  return false;
}

autograd::SavedTensor save(const Tensor& t, bool is_output, int nr) {
  autograd::SavedTensor s;
  s.saved = true;
  s.version = t.storage()->version();
  s.is_output = is_output;
  s.output_nr = nr;
  // Outputs are stored without autograd identity to avoid node -> tensor -> node cycles.
  s.data = is_output ? detail::make_view(t, t.shape(), t.strides(), t.offset()) : t;
  return s;
}

void record(const OpDef& op, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, const Attrs& attrs) {
  auto node = std::make_shared<autograd::OpNode>();
  node->op = &op;
  node->attrs = attrs;
  node->sequence_nr = autograd::next_sequence_nr();
  node->next_edges.reserve(inputs.size());
  node->input_meta.reserve(inputs.size());
  node->saved_inputs.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    node->next_edges.push_back(autograd::gradient_edge(inputs[i]));
    node->input_meta.push_back({inputs[i].shape(), inputs[i].dtype()});
    // The masks have 32 bits; inputs past them (a concat of many tensors) are never saved.
    if (i < 32 && (op.save_inputs & (1u << i))) node->saved_inputs[i] = save(inputs[i], false, 0);
  }
  node->saved_outputs.resize(outputs.size());
  node->output_meta.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    node->output_meta.push_back({outputs[i].shape(), outputs[i].dtype()});
    if (i < 32 && (op.save_outputs & (1u << i))) node->saved_outputs[i] = save(outputs[i], true, int(i));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!is_differentiable(outputs[i].dtype())) continue;
    // A view op may return its input itself (e.g. reshape to the same shape): alias it.
    for (const auto& in : inputs)
      if (outputs[i].is_same(in)) outputs[i] = detail::make_view(in, in.shape(), in.strides(), in.offset());
    auto& meta = outputs[i].impl().autograd();
    meta.requires_grad = true;
    meta.grad_fn = node;
    meta.output_nr = int(i);
  }
}

}  // namespace

// ---- op observer -----------------------------------------------------------------------------

static thread_local detail::OpObserver* t_observer = nullptr;

namespace detail {
OpObserver* op_observer() { return t_observer; }
OpObserver* set_op_observer(OpObserver* observer) {
  OpObserver* prev = t_observer;
  t_observer = observer;
  return prev;
}
}  // namespace detail

namespace {

/// Uninstalls the observer for one op (and its report), reinstalling it on exit.
struct ObserverPause {
  detail::OpObserver* saved;
  ObserverPause() : saved(t_observer) { t_observer = nullptr; }
  ~ObserverPause() { t_observer = saved; }
};

std::vector<Tensor> run_op(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs);
Tensor& run_op_inplace(const OpDef& op, Tensor& self, const std::vector<Tensor>& inputs, const Attrs& attrs);

}  // namespace

std::vector<Tensor> call_op(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  if (t_observer == nullptr) [[likely]] return run_op(op, inputs, attrs);
  ObserverPause pause;
  std::vector<Tensor> outputs = run_op(op, inputs, attrs);
  pause.saved->on_op(op, inputs, outputs, attrs, false);
  return outputs;
}

Tensor& call_op_inplace(const OpDef& op, Tensor& self, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  if (t_observer == nullptr) [[likely]] return run_op_inplace(op, self, inputs, attrs);
  ObserverPause pause;
  // The observer needs the inputs as they were: `self` may be one of them.
  std::vector<Tensor> before = inputs;
  run_op_inplace(op, self, inputs, attrs);
  pause.saved->on_op(op, before, {self}, attrs, true);
  return self;
}

namespace {

/// op.infer, with the op named in the error when the rule that failed did not say which op it
/// checked (shared rules such as broadcasting are written for many ops).
std::vector<TensorMeta> infer_outputs(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  try {
    return op.infer(inputs, attrs);
  } catch (Error& e) {
    if (!std::string_view(e.what()).starts_with(op.name)) e.add_context(fmt::format("in op '{}'", op.name));
    throw;
  }
}

std::vector<Tensor> run_op(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  check_inputs(op, inputs);
  std::vector<Tensor> outputs;
  if (op.view) {
    outputs = op.view(inputs, attrs);
  } else {
    std::vector<TensorMeta> metas = infer_outputs(op, inputs, attrs);
    Device device = inputs.empty() ? kCPU : inputs[0].device();
    outputs.reserve(metas.size());
    for (const auto& m : metas) outputs.push_back(empty(m.shape, m.dtype, device));
    DType key = op.dispatch_input >= 0 && size_t(op.dispatch_input) < inputs.size()
                    ? inputs[size_t(op.dispatch_input)].dtype()
                    : metas.at(0).dtype;
    KernelContext ctx{inputs, outputs, attrs};
    select_kernel(op.name, device, key, ctx).fn(ctx);
  }
  if (op.backward && GradMode::enabled() && any_requires_grad(inputs)) record(op, inputs, outputs, attrs);
  return outputs;
}

Tensor& run_op_inplace(const OpDef& op, Tensor& self, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  check_inputs(op, inputs);
  SKIFF_CHECK(!(GradMode::enabled() && any_requires_grad(inputs)),
              "{}_: in-place operation on tensors that require grad is not supported (autograd needs "
              "the original values); use the out-of-place {} or a NoGradGuard", op.name, op.name);
  std::vector<TensorMeta> metas = infer_outputs(op, inputs, attrs);
  SKIFF_CHECK_SHAPE(metas.size() == 1 && metas[0].shape == self.shape(),
                    "{}_: result shape {} does not match the in-place target {}", op.name, metas[0].shape,
                    self.shape());
  std::vector<Tensor> outputs;
  if (metas[0].dtype == self.dtype()) {
    outputs.push_back(self);
  } else {
    outputs.push_back(empty(metas[0].shape, metas[0].dtype, self.device()));
  }
  DType key = op.dispatch_input >= 0 && size_t(op.dispatch_input) < inputs.size()
                  ? inputs[size_t(op.dispatch_input)].dtype()
                  : metas[0].dtype;
  KernelContext ctx{inputs, outputs, attrs};
  select_kernel(op.name, self.device(), key, ctx).fn(ctx);
  if (!outputs[0].is_same(self)) detail::copy_into(self, outputs[0]);
  self.storage()->bump_version();
  return self;
}

}  // namespace

Tensor call_op1(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  return std::move(call_op(op, inputs, attrs)[0]);
}

}  // namespace skiff
