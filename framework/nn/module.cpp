#include "framework/nn/module.h"

#include <algorithm>
#include <set>

#include "framework/ops/op.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff::nn {

Module::~Module() = default;

std::string Module::type_name() const { return "Module"; }

Tensor Module::forward(const Tensor& x) {
  (void)x;
  SKIFF_THROW(NotImplementedError,
              "{}: forward(Tensor) is not implemented; this module takes other inputs (see its header)",
              type_name());
}

Tensor Module::operator()(const Tensor& x) {
  try {
    return forward(x);
  } catch (Error& e) {
    // Each nesting level adds one line, so a failure deep in a model reads as a path.
    e.add_context("in " + type_name() + ".forward");
    throw;
  }
}

void Module::check_new_name(const std::string& name, const char* what) const {
  SKIFF_CHECK(!name.empty(), "{}: {} name must not be empty", type_name(), what);
  SKIFF_CHECK(name.find('.') == std::string::npos, "{}: {} name '{}' must not contain '.'", type_name(), what,
              name);
  auto taken = [&](const std::vector<Entry>& v) {
    return std::any_of(v.begin(), v.end(), [&](const Entry& e) { return e.name == name; });
  };
  bool dup = taken(params_) || taken(buffers_) ||
             std::any_of(children_.begin(), children_.end(), [&](const auto& c) { return c.first == name; });
  SKIFF_CHECK(!dup, "{}: cannot register {} '{}': the name is already used", type_name(), what, name);
}

Tensor& Module::register_parameter(const std::string& name, Tensor t, bool requires_grad) {
  check_new_name(name, "parameter");
  SKIFF_CHECK(t.defined(), "{}: parameter '{}' is an undefined tensor", type_name(), name);
  // A parameter is always a leaf: cut any history the initializer may have left.
  if (!t.is_leaf()) t = detail::contiguous_copy(detach(t));
  if (requires_grad) {
    SKIFF_CHECK_DTYPE(is_differentiable(t.dtype()), "{}: parameter '{}' has dtype {}, which cannot require grad",
                      type_name(), name, dtype_name(t.dtype()));
  }
  if (requires_grad || t.requires_grad()) t.set_requires_grad(requires_grad);
  params_.push_back(Entry{name, std::make_unique<Tensor>(std::move(t))});
  return *params_.back().tensor;
}

Tensor& Module::register_buffer(const std::string& name, Tensor t) {
  check_new_name(name, "buffer");
  if (t.defined() && !t.is_leaf()) t = detail::contiguous_copy(detach(t));
  buffers_.push_back(Entry{name, std::make_unique<Tensor>(std::move(t))});
  return *buffers_.back().tensor;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> m) {
  check_new_name(name, "module");
  SKIFF_CHECK(m.get() != this, "{}: a module cannot be its own child ('{}')", type_name(), name);
  children_.emplace_back(name, std::move(m));
}

void Module::collect(const std::string& prefix, bool params, bool recurse,
                     std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const Entry& e : params ? params_ : buffers_)
    if (e.tensor->defined()) out.emplace_back(prefix + e.name, *e.tensor);
  if (!recurse) return;
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", params, true, out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", true, recurse, out);
  // A module shared twice in the tree (weight tying) must not be trained twice.
  std::set<const TensorImpl*> seen;
  std::erase_if(out, [&](const auto& p) { return !seen.insert(p.second.impl_ptr().get()).second; });
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [n, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", false, recurse, out);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [n, t] : named_buffers(recurse)) out.push_back(t);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const { return children_; }

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& c : children_) out.push_back(c.second);
  return out;
}

void Module::collect_modules(const std::string& prefix, std::vector<std::pair<std::string, Module*>>& out) {
  out.emplace_back(prefix, this);
  for (auto& [name, child] : children_) child->collect_modules(prefix.empty() ? name : prefix + "." + name, out);
}

std::vector<std::pair<std::string, Module*>> Module::named_modules() {
  std::vector<std::pair<std::string, Module*>> out;
  collect_modules("", out);
  return out;
}

namespace {
std::string names_of(const auto& entries) {
  std::string s;
  for (const auto& e : entries) s += (s.empty() ? "" : ", ") + e.name;
  return s.empty() ? "(none)" : s;
}
}  // namespace

Tensor& Module::param(const std::string& name) {
  for (Entry& e : params_)
    if (e.name == name) return *e.tensor;
  SKIFF_THROW(ValueError, "{}: no parameter named '{}'; parameters are: {}", type_name(), name, names_of(params_));
}

Tensor& Module::buffer(const std::string& name) {
  for (Entry& e : buffers_)
    if (e.name == name) return *e.tensor;
  SKIFF_THROW(ValueError, "{}: no buffer named '{}'; buffers are: {}", type_name(), name, names_of(buffers_));
}

std::shared_ptr<Module> Module::child(const std::string& name) const {
  for (const auto& c : children_)
    if (c.first == name) return c.second;
  std::string known;
  for (const auto& c : children_) known += (known.empty() ? "" : ", ") + c.first;
  SKIFF_THROW(ValueError, "{}: no child module named '{}'; children are: {}", type_name(), name,
              known.empty() ? "(none)" : known);
}

int64_t Module::num_parameters(bool trainable_only) const {
  int64_t n = 0;
  for (const Tensor& p : parameters())
    if (!trainable_only || p.requires_grad()) n += p.numel();
  return n;
}

std::map<std::string, Tensor> Module::state_dict() const {
  std::map<std::string, Tensor> sd;
  auto add = [&](const std::vector<std::pair<std::string, Tensor>>& v) {
    for (const auto& [name, t] : v) sd.emplace(name, detail::make_view(t, t.shape(), t.strides(), t.offset()));
  };
  // Parameters without dedup: a tied weight appears under each of its names, as in PyTorch.
  std::vector<std::pair<std::string, Tensor>> params;
  collect("", true, true, params);
  add(params);
  add(named_buffers());
  return sd;
}

LoadResult Module::load_state_dict(const std::map<std::string, Tensor>& sd, bool strict) {
  std::vector<std::pair<std::string, Tensor>> targets;
  collect("", true, true, targets);
  collect("", false, true, targets);

  LoadResult result;
  std::vector<std::string> mismatched;
  std::set<std::string> known;
  for (const auto& [name, dst] : targets) {
    known.insert(name);
    auto it = sd.find(name);
    if (it == sd.end() || !it->second.defined()) {
      result.missing_keys.push_back(name);
    } else if (it->second.shape() != dst.shape()) {
      mismatched.push_back(fmt::format("{} (checkpoint {}, module {})", name, it->second.shape(), dst.shape()));
    }
  }
  for (const auto& [name, t] : sd)
    if (!known.count(name)) result.unexpected_keys.push_back(name);

  bool fail = !mismatched.empty() || (strict && (!result.missing_keys.empty() || !result.unexpected_keys.empty()));
  if (fail) {
    auto list = [](const std::vector<std::string>& v) {
      return v.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(v, ", "));
    };
    SKIFF_THROW(ValueError,
                "{}.load_state_dict: state dict does not match the module\n  missing keys: {}\n  unexpected keys: "
                "{}\n  shape mismatches: {}",
                type_name(), list(result.missing_keys), list(result.unexpected_keys), list(mismatched));
  }
  // Everything was validated above, so a failed load never leaves the module half-written.
  for (const auto& [name, dst] : targets) {
    auto it = sd.find(name);
    if (it == sd.end() || !it->second.defined()) continue;
    if (it->second.impl_ptr() == dst.impl_ptr()) continue;
    SKIFF_CHECK_DTYPE(is_differentiable(dst.dtype()) || !is_differentiable(it->second.dtype()),
                      "{}.load_state_dict: '{}' holds {}, checkpoint has {}", type_name(), name,
                      dtype_name(dst.dtype()), dtype_name(it->second.dtype()));
    detail::copy_into(dst, it->second);
    dst.storage()->bump_version();
  }
  return result;
}

void Module::train(bool on) {
  training_ = on;
  on_train_changed();
  for (auto& c : children_) c.second->train(on);
}

void Module::zero_grad() {
  for (Tensor& p : parameters())
    if (p.impl().autograd_) p.impl().autograd_->grad.reset();
}

void Module::to(DType dtype) {
  SKIFF_CHECK_DTYPE(is_floating(dtype), "{}.to: expected a floating dtype, got {}", type_name(), dtype_name(dtype));
  NoGradGuard no_grad;
  std::vector<std::pair<std::string, Tensor>> all;
  collect("", true, true, all);
  collect("", false, true, all);
  std::set<const TensorImpl*> done;
  for (auto& [name, t] : all) {
    if (!is_floating(t.dtype()) || t.dtype() == dtype || !done.insert(t.impl_ptr().get()).second) continue;
    // Swap the converted data into the existing TensorImpl so every handle to
    // this parameter (layer members, optimizer lists) sees the new dtype.
    Tensor c = detail::contiguous_copy(detail::cast(t, dtype));
    TensorImpl& impl = t.impl();
    impl.storage_ = c.impl().storage_;
    impl.shape_ = c.impl().shape_;
    impl.strides_ = c.impl().strides_;
    impl.offset_ = c.impl().offset_;
    impl.dtype_ = dtype;
    if (impl.autograd_) impl.autograd_->grad.reset();
  }
}

void Module::requires_grad_(bool on) {
  for (Tensor& p : parameters()) {
    if (on && !is_differentiable(p.dtype())) continue;
    p.set_requires_grad(on);
  }
}

void Module::apply(const std::function<void(Module&)>& fn) {
  fn(*this);
  for (auto& c : children_) c.second->apply(fn);
}

void Module::str_into(std::string& out, int indent) const {
  out += type_name() + "(" + extra_repr();
  if (children_.empty()) {
    out += ")";
    return;
  }
  out += "\n";
  std::string pad(indent + 2, ' ');
  for (const auto& [name, child] : children_) {
    out += pad + "(" + name + "): ";
    child->str_into(out, indent + 2);
    out += "\n";
  }
  out += std::string(indent, ' ') + ")";
}

std::string Module::str() const {
  std::string s;
  str_into(s, 0);
  return s;
}

}  // namespace skiff::nn
