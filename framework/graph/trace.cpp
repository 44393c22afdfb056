// Tracing eager code into graph IR: an op observer that lowers each skiff op to
// ONNX nodes as it runs (see trace.h for the contract).
#include "framework/graph/trace.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "framework/graph/lowering.h"
#include "framework/nn/module.h"
#include "framework/ops/ops.h"

namespace skiff::graph {
namespace {

struct Value {
  std::string name;
  DimFlags flags;
  Tensor keep;  ///< holds the TensorImpl so its address is not reused while tracing
};

/// Records the ops of one traced run as graph nodes: each op is lowered by its
/// entry in the lowering registry (lowering.h), through this LoweringContext.
class Tracer final : public detail::OpObserver, public LoweringContext {
 public:
  Tracer(nn::Module* module, const TraceOptions& options) : options_(options) {
    graph_.name = options.graph_name;
    graph_.producer = "skiff trace";
    graph_.opset_version = options.opset;
    if (module == nullptr) return;
    for (const auto& [name, t] : module->named_parameters()) module_tensors_.emplace(&t.impl(), name), keep_.push_back(t);
    for (const auto& [name, t] : module->named_buffers()) module_tensors_.emplace(&t.impl(), name), keep_.push_back(t);
  }

  void add_input(const Tensor& t, const std::string& name) {
    SKIFF_CHECK(t.defined(), "trace: example input '{}' is an undefined tensor", name);
    SKIFF_CHECK(!values_.count(&t.impl()), "trace: the same tensor is passed as two example inputs");
    DimFlags flags(size_t(t.dim()), kStatic);
    ValueInfo vi{name, t.dtype(), true, {}};
    for (int64_t d = 0; d < t.dim(); ++d) {
      bool batch = options_.dynamic_batch && d == 0;
      flags[size_t(d)] = batch ? kBatch : kStatic;
      vi.shape.push_back(batch ? Dim::dynamic(options_.batch_symbol) : Dim::fixed(t.size(d)));
    }
    graph_.inputs.push_back(vi);
    bind(t, name, flags);
    traced_storages_.emplace(t.storage().get());
  }

  void on_op(const OpDef& op, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
             const Attrs& attrs, bool /*inplace*/) override {
    try {
      lower(op, inputs, outputs, attrs);
    } catch (Error& e) {
      e.add_context(fmt::format("tracing op '{}'", op.name));
      throw;
    }
  }

  Graph finish(const std::vector<Tensor>& results) {
    std::unordered_set<std::string> used_as_output;
    for (size_t i = 0; i < results.size(); ++i) {
      const Tensor& t = results[i];
      SKIFF_CHECK(t.defined(), "trace: output {} of the traced function is an undefined tensor", i);
      std::string want = !options_.output_names.empty() ? options_.output_names.at(i)
                         : results.size() == 1     ? std::string("output")
                                                   : fmt::format("output_{}", i);
      std::string v = value_of(t);
      // A value not made by a node here (input, initializer) or already an output gets an Identity.
      bool produced = produced_.count(v) != 0;
      if (!produced || used_as_output.count(v)) v = node("Identity", {v}, {});
      SKIFF_CHECK(!names_.count(want) || want == v, "trace: output name '{}' is already used by another value", want);
      rename(v, want);
      used_as_output.insert(want);
      ValueInfo vi{want, t.dtype(), true, {}};
      DimFlags f = flags_of(t);
      for (int64_t d = 0; d < t.dim(); ++d) {
        uint8_t k = f[size_t(d)];
        vi.shape.push_back(k == kStatic  ? Dim::fixed(t.size(d))
                           : k == kBatch ? Dim::dynamic(options_.batch_symbol)
                                         : Dim::dynamic());
      }
      graph_.outputs.push_back(vi);
    }
    recover_batch_norm();
    prune();
    graph_.validate();
    return std::move(graph_);
  }

 private:
  // ---- values ----------------------------------------------------------------------

  void bind(const Tensor& t, const std::string& name, DimFlags flags) {
    names_.insert(name);
    ranks_[name] = t.dim();
    values_[&t.impl()] = Value{name, std::move(flags), t};
  }

  DimFlags flags_of(const Tensor& t) const {
    auto it = values_.find(&t.impl());
    return it != values_.end() ? it->second.flags : DimFlags(size_t(t.dim()), kStatic);
  }

  static bool same_view(const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() && a.strides() == b.strides() && a.offset() == b.offset() &&
           a.dtype() == b.dtype();
  }

  /// The value name of a tensor the traced code uses (see trace.h: inputs, module
  /// tensors, captured constants).
  std::string value_of(const Tensor& t) {
    auto it = values_.find(&t.impl());
    if (it != values_.end()) return it->second.name;
    auto gone = unavailable_.find(&t.impl());
    if (gone != unavailable_.end()) SKIFF_THROW(NotImplementedError, "trace: {}", gone->second);
    // A module tensor, or a non-op view of one (detach()).
    auto mt = module_tensors_.find(&t.impl());
    const std::string* path = mt != module_tensors_.end() ? &mt->second : nullptr;
    if (path == nullptr) {
      for (const auto& m : keep_)
        if (m.storage() == t.storage() && same_view(m, t)) path = &module_tensors_.at(&m.impl());
    }
    if (path != nullptr) {
      std::string name = *path;
      graph_.initializers[name] = detail::contiguous_copy(t);
      bind(t, name, DimFlags(size_t(t.dim()), kStatic));
      return name;
    }
    // A non-op view of a traced (input-dependent) value cannot be expressed.
    if (traced_storages_.count(t.storage().get())) {
      for (const auto& [impl, v] : values_)
        if (v.keep.storage() == t.storage() && same_view(v.keep, t)) {
          bind(t, v.name, v.flags);
          return v.name;
        }
      SKIFF_THROW(ValueError,
                  "trace: the forward uses a tensor of shape {} that views a traced value without going through an "
                  "op (detail::make_view?); it cannot be recorded",
                  t.shape());
    }
    std::string name = fmt::format("const_{}", const_count_++);
    graph_.initializers[name] = detail::contiguous_copy(t);
    bind(t, name, DimFlags(size_t(t.dim()), kStatic));
    return name;
  }

  std::string constant(const Tensor& t) override {
    std::string name = fmt::format("const_{}", const_count_++);
    graph_.initializers[name] = t;
    names_.insert(name);
    return name;
  }

  // ---- nodes -----------------------------------------------------------------------

  std::string node(const std::string& op_type, std::vector<std::string> inputs,
                   std::map<std::string, AttrValue> attrs) override {
    Node n;
    n.op_type = op_type;
    n.name = fmt::format("{}_{}", op_type, graph_.nodes.size());
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    n.outputs.push_back(n.name);
    names_.insert(n.name);
    produced_.insert(n.name);
    graph_.nodes.push_back(std::move(n));
    return graph_.nodes.back().name;
  }

  void rename(const std::string& from, const std::string& to) {
    if (from == to) return;
    for (auto& n : graph_.nodes) {
      for (auto& v : n.inputs)
        if (v == from) v = to;
      for (auto& v : n.outputs)
        if (v == from) v = to;
    }
    for (auto& [impl, v] : values_)
      if (v.name == from) v.name = to;
    produced_.erase(from);
    produced_.insert(to);
    names_.insert(to);
  }

  /// Eval-mode batch_norm is a composite in skiff (norm.cpp): a per-channel scale
  /// rsqrt(var + eps) [* weight] and shift -mean * scale [+ bias], applied as
  /// x * scale.view(C, 1, ..) + shift.view(C, 1, ..). This finds that chain on
  /// module tensors and replaces the final Add by one BatchNormalization node, so
  /// the file has the op other tools (and BN folding, GraphModule's buffers) expect;
  /// prune() then drops the chain. Anything that does not match stays as traced.
  void recover_batch_norm() {
    std::unordered_map<std::string, size_t> producer;
    for (size_t i = 0; i < graph_.nodes.size(); ++i)
      for (const auto& v : graph_.nodes[i].outputs) producer[v] = i;
    auto made_by = [&](const std::string& v, const char* type) -> const Node* {
      auto it = producer.find(v);
      if (it == producer.end()) return nullptr;
      const Node& n = graph_.nodes[it->second];
      return n.op_type == type ? &n : nullptr;
    };
    auto vector_of = [&](const std::string& v, int64_t c) {
      auto it = graph_.initializers.find(v);
      return it != graph_.initializers.end() && it->second.dim() == 1 && (c < 0 || it->second.size(0) == c) &&
             is_floating(it->second.dtype());
    };
    for (auto& add : graph_.nodes) {
      if (add.op_type != "Add" || add.inputs.size() != 2) continue;
      const Node* mul = made_by(add.inputs[0], "Mul");
      const Node* shift_view = made_by(add.inputs[1], "Reshape");
      if (!mul || !shift_view) continue;
      const Node* scale_view = made_by(mul->inputs[1], "Reshape");
      auto rank = ranks_.find(mul->inputs[0]);
      if (!scale_view || rank == ranks_.end() || rank->second < 2) continue;
      const std::string &scale = scale_view->inputs[0], &shift = shift_view->inputs[0];
      // scale = Reciprocal(Sqrt(Add(var, eps))) [* weight]
      std::string weight, rsqrt = scale;
      if (const Node* w = made_by(scale, "Mul"); w && made_by(w->inputs[0], "Reciprocal")) {
        weight = w->inputs[1];
        rsqrt = w->inputs[0];
      }
      const Node* recip = made_by(rsqrt, "Reciprocal");
      const Node* sqrt = recip ? made_by(recip->inputs[0], "Sqrt") : nullptr;
      const Node* add_eps = sqrt ? made_by(sqrt->inputs[0], "Add") : nullptr;
      if (!add_eps || !vector_of(add_eps->inputs[0], -1) || !graph_.is_initializer(add_eps->inputs[1]) ||
          graph_.initializers.at(add_eps->inputs[1]).numel() != 1)
        continue;
      const std::string& var = add_eps->inputs[0];
      const int64_t c = graph_.initializers.at(var).size(0);
      // shift = Neg(Mul(mean, scale)) [+ bias]
      std::string bias, neg_out = shift;
      if (const Node* b = made_by(shift, "Add"); b && made_by(b->inputs[0], "Neg")) {
        bias = b->inputs[1];
        neg_out = b->inputs[0];
      }
      const Node* neg = made_by(neg_out, "Neg");
      const Node* mean_mul = neg ? made_by(neg->inputs[0], "Mul") : nullptr;
      if (!mean_mul || mean_mul->inputs[1] != scale || !vector_of(mean_mul->inputs[0], c)) continue;
      if ((!weight.empty() && !vector_of(weight, c)) || (!bias.empty() && !vector_of(bias, c))) continue;
      // Both views put the channels on dim 1 of x.
      std::vector<int64_t> view{c};
      view.resize(size_t(rank->second - 1), 1);
      auto is_view = [&](const Node* r) {
        auto it = graph_.initializers.find(r->inputs[1]);
        return it != graph_.initializers.end() && it->second.dtype() == DType::Int64 &&
               it->second.to_vector<int64_t>() == view;
      };
      if (!is_view(scale_view) || !is_view(shift_view)) continue;
      const DType dtype = graph_.initializers.at(var).dtype();
      float eps = float(graph_.initializers.at(add_eps->inputs[1]).to_vector<double>()[0]);
      std::string x = mul->inputs[0], mean = mean_mul->inputs[0];
      if (weight.empty()) weight = constant(ones({c}, dtype));
      if (bias.empty()) bias = constant(zeros({c}, dtype));
      add.op_type = "BatchNormalization";
      add.name = fmt::format("BatchNormalization_{}", &add - graph_.nodes.data());
      add.inputs = {x, weight, bias, mean, var};
      add.attrs = {{"epsilon", eps}};
    }
  }

  /// Drops nodes and initializers no output depends on (the unused statistics of
  /// layer_norm, values computed and discarded by the forward).
  void prune() {
    std::unordered_set<std::string> live;
    for (const auto& o : graph_.outputs) live.insert(o.name);
    std::vector<Node> kept;
    for (size_t i = graph_.nodes.size(); i-- > 0;) {
      Node& n = graph_.nodes[i];
      bool needed = std::any_of(n.outputs.begin(), n.outputs.end(), [&](const auto& v) { return live.count(v); });
      if (!needed) continue;
      for (const auto& v : n.inputs)
        if (!v.empty()) live.insert(v);
      kept.push_back(std::move(n));
    }
    std::reverse(kept.begin(), kept.end());
    graph_.nodes = std::move(kept);
    for (auto it = graph_.initializers.begin(); it != graph_.initializers.end();)
      it = live.count(it->first) ? std::next(it) : graph_.initializers.erase(it);
  }

  // ---- lowering --------------------------------------------------------------------

  void lower(const OpDef& op, const std::vector<Tensor>& ins, const std::vector<Tensor>& outs, const Attrs& a) {
    std::vector<std::string> in;
    for (const auto& t : ins) in.push_back(value_of(t));
    if (!lowerings().contains(op.name))
      SKIFF_THROW(NotImplementedError, "trace: skiff op '{}' has no ONNX lowering (attrs: {})", op.name, a.str());
    const Lowering& lowering = lowerings().get(op.name);
    if (!lowering.fn) SKIFF_THROW(NotImplementedError, "trace: {}", lowering.not_exportable);
    std::vector<DimFlags> flags;
    for (const auto& t : ins) flags.push_back(flags_of(t));
    begin(op, ins, outs, a, std::move(in), std::move(flags));
    lowering.fn(*this);
    for (size_t i = 0; i < outs.size(); ++i) {
      if (out_[i].empty()) {
        unavailable_[&outs[i].impl()] =
            why_not_[i].empty() ? fmt::format("output {} of {} is not traced", i, op.name) : why_not_[i];
        keep_unavailable_.push_back(outs[i]);
        continue;
      }
      bind(outs[i], out_[i], out_flags_[i]);
      traced_storages_.emplace(outs[i].storage().get());
    }
  }

  TraceOptions options_;
  Graph graph_;
  std::unordered_map<const TensorImpl*, std::string> module_tensors_;
  std::vector<Tensor> keep_;  // module tensors (for storage matches)
  std::unordered_map<const TensorImpl*, Value> values_;
  std::unordered_map<const TensorImpl*, std::string> unavailable_;
  std::vector<Tensor> keep_unavailable_;
  std::unordered_set<const Storage*> traced_storages_;
  std::unordered_set<std::string> names_;     // every value name in use
  std::unordered_set<std::string> produced_;  // values made by a node
  std::unordered_map<std::string, int64_t> ranks_;  // value name -> rank
  int64_t const_count_ = 0;
};

/// Installs a tracer on this thread for one scope.
struct ObserverScope {
  detail::OpObserver* prev;
  explicit ObserverScope(detail::OpObserver* o) : prev(detail::set_op_observer(o)) {}
  ~ObserverScope() { detail::set_op_observer(prev); }
};

}  // namespace

Graph trace(nn::Module* module, const TraceFn& fn, const std::vector<Tensor>& example_inputs,
            const TraceOptions& options) {
  SKIFF_CHECK(!example_inputs.empty(), "trace: expected at least one example input");
  SKIFF_CHECK(options.input_names.empty() || options.input_names.size() == example_inputs.size(),
              "trace: {} input names for {} example inputs", options.input_names.size(), example_inputs.size());
  SKIFF_CHECK(detail::op_observer() == nullptr, "trace: already tracing on this thread");
  Tracer tracer(module, options);
  for (size_t i = 0; i < example_inputs.size(); ++i) {
    std::string name = !options.input_names.empty() ? options.input_names[i]
                       : example_inputs.size() == 1 ? std::string("input")
                                                    : fmt::format("input_{}", i);
    tracer.add_input(example_inputs[i], name);
  }
  std::vector<Tensor> results;
  {
    NoGradGuard no_grad;
    ObserverScope scope(&tracer);
    results = fn(example_inputs);
  }
  SKIFF_CHECK(!results.empty(), "trace: the traced function returned no tensors");
  SKIFF_CHECK(options.output_names.empty() || options.output_names.size() == results.size(),
              "trace: {} output names for {} outputs", options.output_names.size(), results.size());
  return tracer.finish(results);
}

Graph trace(nn::Module& module, const std::vector<Tensor>& example_inputs, const TraceOptions& options) {
  SKIFF_CHECK(example_inputs.size() == 1,
              "trace: Module::forward takes one tensor, got {} example inputs (use the TraceFn overload)",
              example_inputs.size());
  return trace(
      &module, [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{module.forward(in[0])}; },
      example_inputs, options);
}

}  // namespace skiff::graph
