// Tracing eager code into graph IR: an op observer that lowers each skiff op to
// ONNX nodes as it runs (see trace.h for the contract).
#include "framework/graph/trace.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "framework/graph/onnx_import.h"
#include "framework/nn/module.h"
#include "framework/ops/ops.h"

namespace skiff::graph {
namespace {

/// How one dim of a traced value relates to the dynamic batch.
enum DimKind : uint8_t {
  kStatic = 0,   ///< a fixed size
  kBatch = 1,    ///< exactly the batch size
  kDerived = 2,  ///< a size computed from the batch (B * T, ...)
};
using Flags = std::vector<uint8_t>;

struct Value {
  std::string name;
  Flags flags;
  Tensor keep;  ///< holds the TensorImpl so its address is not reused while tracing
};

constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();

const std::unordered_map<std::string, std::string>& unary_ops() {
  static const std::unordered_map<std::string, std::string> m{
      {"neg", "Neg"},         {"abs", "Abs"},     {"sign", "Sign"},   {"exp", "Exp"},       {"log", "Log"},
      {"sqrt", "Sqrt"},       {"reciprocal", "Reciprocal"},           {"sin", "Sin"},       {"cos", "Cos"},
      {"tan", "Tan"},         {"tanh", "Tanh"},   {"sigmoid", "Sigmoid"}, {"erf", "Erf"},   {"floor", "Floor"},
      {"ceil", "Ceil"},       {"round", "Round"}, {"relu", "Relu"},   {"logical_not", "Not"}};
  return m;
}

const std::unordered_map<std::string, std::string>& broadcast_ops() {
  static const std::unordered_map<std::string, std::string> m{
      {"add", "Add"},     {"sub", "Sub"},           {"mul", "Mul"},       {"div", "Div"},
      {"pow", "Pow"},     {"maximum", "Max"},       {"minimum", "Min"},   {"eq", "Equal"},
      {"lt", "Less"},     {"le", "LessOrEqual"},    {"gt", "Greater"},    {"ge", "GreaterOrEqual"},
      {"logical_and", "And"}, {"logical_or", "Or"}, {"logical_xor", "Xor"}, {"where", "Where"}};
  return m;
}

/// Torch-style pads (pairs from the last dim backwards) -> ONNX [begins..., ends...].
std::vector<int64_t> onnx_pads(const std::vector<int64_t>& pairs, int64_t rank) {
  std::vector<int64_t> out(size_t(2 * rank), 0);
  for (size_t i = 0; i < pairs.size() / 2; ++i) {
    int64_t d = rank - 1 - int64_t(i);
    out[size_t(d)] = pairs[2 * i];
    out[size_t(d + rank)] = pairs[2 * i + 1];
  }
  return out;
}

std::vector<int64_t> pair(const std::vector<int64_t>& v) {
  return v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v;
}

class Tracer final : public detail::OpObserver {
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
    Flags flags(size_t(t.dim()), kStatic);
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
      if (!produced || used_as_output.count(v)) v = node1("Identity", {v}, {});
      SKIFF_CHECK(!names_.count(want) || want == v, "trace: output name '{}' is already used by another value", want);
      rename(v, want);
      used_as_output.insert(want);
      ValueInfo vi{want, t.dtype(), true, {}};
      Flags f = flags_of(t);
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

  void bind(const Tensor& t, const std::string& name, Flags flags) {
    names_.insert(name);
    ranks_[name] = t.dim();
    values_[&t.impl()] = Value{name, std::move(flags), t};
  }

  Flags flags_of(const Tensor& t) const {
    auto it = values_.find(&t.impl());
    return it != values_.end() ? it->second.flags : Flags(size_t(t.dim()), kStatic);
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
      bind(t, name, Flags(size_t(t.dim()), kStatic));
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
    bind(t, name, Flags(size_t(t.dim()), kStatic));
    return name;
  }

  std::string const_ints(const std::vector<int64_t>& v) {
    std::string name = fmt::format("const_{}", const_count_++);
    graph_.initializers[name] = from_vector(v);
    names_.insert(name);
    return name;
  }

  std::string const_scalar(double v, DType dtype) {
    std::string name = fmt::format("const_{}", const_count_++);
    graph_.initializers[name] = full({}, v, dtype);
    names_.insert(name);
    return name;
  }

  std::string const_tensor(const Tensor& t) {
    std::string name = fmt::format("const_{}", const_count_++);
    graph_.initializers[name] = t;
    names_.insert(name);
    return name;
  }

  // ---- nodes -----------------------------------------------------------------------

  std::vector<std::string> node(const std::string& op_type, std::vector<std::string> inputs,
                                std::map<std::string, AttrValue> attrs, size_t num_outputs = 1) {
    Node n;
    n.op_type = op_type;
    n.name = fmt::format("{}_{}", op_type, graph_.nodes.size());
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    for (size_t i = 0; i < num_outputs; ++i) {
      std::string v = i == 0 ? n.name : fmt::format("{}_{}", n.name, i);
      n.outputs.push_back(v);
      names_.insert(v);
      produced_.insert(v);
    }
    graph_.nodes.push_back(std::move(n));
    return graph_.nodes.back().outputs;
  }

  std::string node1(const std::string& op_type, std::vector<std::string> inputs,
                    std::map<std::string, AttrValue> attrs) {
    return node(op_type, std::move(inputs), std::move(attrs))[0];
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
      if (weight.empty()) weight = const_tensor(ones({c}, dtype));
      if (bias.empty()) bias = const_tensor(zeros({c}, dtype));
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

  // ---- dynamic batch ---------------------------------------------------------------

  static Flags broadcast(const std::vector<Flags>& in, size_t rank) {
    Flags out(rank, kStatic);
    for (const auto& f : in)
      for (size_t d = 0; d < f.size(); ++d) {
        uint8_t& o = out[rank - f.size() + d];
        o = std::max(o, f[d]);
      }
    return out;
  }

  /// The Reshape target for `out` from `in` whose dims are `fin`: static sizes, 0
  /// to copy a batch dim in place, -1 for the one batch-derived dim that moved.
  /// Dims are matched in groups of equal products ([B, T, C] -> [B*T, C]).
  std::pair<std::vector<int64_t>, Flags> reshape_target(const Shape& in, const Flags& fin, const Shape& out) {
    std::vector<int64_t> target(out.begin(), out.end());
    Flags fout(size_t(out.size()), kStatic);
    if (std::all_of(fin.begin(), fin.end(), [](uint8_t f) { return f == kStatic; })) return {target, fout};
    size_t i = 0, j = 0, ni = size_t(in.size()), no = size_t(out.size());
    int inferred = 0;
    while (i < ni || j < no) {
      std::vector<size_t> gi, gj;
      int64_t pi = 1, pj = 1;
      if (i < ni) pi = in[int64_t(i)], gi.push_back(i++);
      if (j < no) pj = out[int64_t(j)], gj.push_back(j++);
      while (pi != pj) {
        if (pi < pj && i < ni) pi *= in[int64_t(i)], gi.push_back(i++);
        else if (pj < pi && j < no) pj *= out[int64_t(j)], gj.push_back(j++);
        else break;
      }
      uint8_t f = kStatic;
      for (size_t a : gi) f = std::max(f, fin[a]);
      if (f == kStatic || gj.empty()) continue;
      size_t o = gj[0];  // the batch leads its group
      if (gi.size() == 1 && gj.size() == 1 && gi[0] == o) {
        target[o] = 0;
        fout[o] = f;
      } else {
        target[o] = -1;
        fout[o] = gi.size() == 1 && gj.size() == 1 ? f : kDerived;
        ++inferred;
      }
    }
    SKIFF_CHECK_T(NotImplementedError, inferred <= 1,
                  "trace: reshape {} -> {} spreads the dynamic batch over several dims; trace without "
                  "dynamic_batch",
                  in, out);
    return {target, fout};
  }

  // ---- lowering --------------------------------------------------------------------

  void lower(const OpDef& op, const std::vector<Tensor>& ins, const std::vector<Tensor>& outs, const Attrs& a) {
    const std::string& name = op.name;
    std::vector<std::string> in;
    for (const auto& t : ins) in.push_back(value_of(t));
    const Tensor& x = ins.empty() ? outs[0] : ins[0];
    const Flags fx = ins.empty() ? Flags() : flags_of(ins[0]);
    std::vector<std::string> out(outs.size());
    std::vector<Flags> fout(outs.size());
    std::vector<std::string> why_not(outs.size());
    auto same = [&] { fout[0] = fx; };
    auto attr_pair = [&](const char* k) { return pair(a.get_ints(k)); };

    if (auto u = unary_ops().find(name); u != unary_ops().end()) {
      out[0] = node1(u->second, {in[0]}, {});
      same();
    } else if (auto b = broadcast_ops().find(name); b != broadcast_ops().end()) {
      out[0] = node1(b->second, in, {});
      std::vector<Flags> fs;
      for (const auto& t : ins) fs.push_back(flags_of(t));
      fout[0] = broadcast(fs, size_t(outs[0].dim()));
    } else if (name == "ne") {
      out[0] = node1("Not", {node1("Equal", in, {})}, {});
      fout[0] = broadcast({flags_of(ins[0]), flags_of(ins[1])}, size_t(outs[0].dim()));
    } else if (name == "rsqrt") {
      out[0] = node1("Reciprocal", {node1("Sqrt", {in[0]}, {})}, {});
      same();
    } else if (name == "square") {
      out[0] = node1("Mul", {in[0], in[0]}, {});
      same();
    } else if (name == "log1p") {
      out[0] = node1("Log", {node1("Add", {in[0], const_scalar(1.0, x.dtype())}, {})}, {});
      same();
    } else if (name == "leaky_relu") {
      out[0] = node1("LeakyRelu", {in[0]}, {{"alpha", float(a.get_float("negative_slope"))}});
      same();
    } else if (name == "clamp") {
      double lo = a.get_float("min"), hi = a.get_float("max");
      out[0] = node1("Clip", {in[0], std::isinf(lo) ? "" : const_scalar(lo, x.dtype()),
                              std::isinf(hi) ? "" : const_scalar(hi, x.dtype())},
                     {});
      same();
    } else if (name == "copy") {
      out[0] = in[0];  // contiguous()/clone(): the same value in a graph
      same();
    } else if (name == "cast") {
      out[0] = node1("Cast", {in[0]}, {{"to", int64_t(dtype_to_onnx(outs[0].dtype()))}});
      same();
    } else if (name == "matmul") {
      out[0] = node1("MatMul", in, {});
      Flags fa = flags_of(ins[0]), fb = flags_of(ins[1]);
      Flags ba(fa.begin(), fa.end() - 2), bb(fb.begin(), fb.end() - 2);
      fout[0] = broadcast({ba, bb}, size_t(outs[0].dim()) - 2);
      fout[0].push_back(fa[fa.size() - 2]);
      fout[0].push_back(fb.back());
    } else if (name == "conv2d") {
      auto pad = attr_pair("padding");
      out[0] = node1("Conv", in,
                     {{"kernel_shape", std::vector<int64_t>{ins[1].size(2), ins[1].size(3)}},
                      {"strides", attr_pair("stride")},
                      {"pads", std::vector<int64_t>{pad[0], pad[1], pad[0], pad[1]}},
                      {"dilations", attr_pair("dilation")},
                      {"group", a.get_int("groups")}});
      fout[0] = {fx[0], kStatic, kStatic, kStatic};
    } else if (name == "max_pool2d" || name == "avg_pool2d") {
      auto pad = attr_pair("padding");
      std::map<std::string, AttrValue> at{{"kernel_shape", attr_pair("kernel")},
                                          {"strides", attr_pair("stride")},
                                          {"pads", std::vector<int64_t>{pad[0], pad[1], pad[0], pad[1]}},
                                          {"ceil_mode", int64_t(a.get_bool("ceil_mode"))}};
      if (name == "max_pool2d") {
        at["dilations"] = attr_pair("dilation");
        out[0] = node1("MaxPool", {in[0]}, at);
        if (outs.size() > 1) why_not[1] = "the indices of max_pool2d have no ONNX lowering";
      } else {
        at["count_include_pad"] = int64_t(a.get_bool("count_include_pad", true));
        out[0] = node1("AveragePool", {in[0]}, at);
      }
      fout[0] = {fx[0], kStatic, kStatic, kStatic};
    } else if (name == "adaptive_avg_pool2d") {
      auto size = attr_pair("output_size");
      int64_t h = x.size(2), w = x.size(3);
      if (size[0] == 1 && size[1] == 1) {
        out[0] = node1("GlobalAveragePool", {in[0]}, {});
      } else {
        SKIFF_CHECK_T(NotImplementedError, h % size[0] == 0 && w % size[1] == 0,
                      "trace: adaptive_avg_pool2d from {}x{} to {}x{} has uneven windows, which ONNX cannot express",
                      h, w, size[0], size[1]);
        std::vector<int64_t> k{h / size[0], w / size[1]};
        out[0] = node1("AveragePool", {in[0]}, {{"kernel_shape", k}, {"strides", k}});
      }
      fout[0] = {fx[0], kStatic, kStatic, kStatic};
    } else if (name == "layer_norm") {
      int64_t axis = a.get_int("axis");
      bool has_w = a.get_bool("has_weight", true), has_b = a.get_bool("has_bias", true);
      std::vector<std::string> args{in[0]};
      size_t next = 1;
      if (has_w) {
        args.push_back(in[next++]);
      } else {
        Shape s(std::vector<int64_t>(x.shape().begin() + axis, x.shape().end()));
        args.push_back(const_tensor(ones(s, x.dtype())));
      }
      if (has_b) args.push_back(in[next++]);
      out[0] = node1("LayerNormalization", args, {{"axis", axis}, {"epsilon", float(a.get_float("eps"))}});
      same();
      for (size_t i = 1; i < outs.size(); ++i) why_not[i] = "the statistics outputs of layer_norm are not traced";
    } else if (name == "softmax" || name == "log_softmax") {
      out[0] = node1(name == "softmax" ? "Softmax" : "LogSoftmax", {in[0]}, {{"axis", a.get_int("dim")}});
      same();
    } else if (name == "reshape") {
      auto [target, f] = reshape_target(x.shape(), fx, outs[0].shape());
      out[0] = node1("Reshape", {in[0], const_ints(target)}, {});
      fout[0] = f;
    } else if (name == "permute") {
      const auto& dims = a.get_ints("dims");
      out[0] = node1("Transpose", {in[0]}, {{"perm", dims}});
      for (int64_t d : dims) fout[0].push_back(fx[size_t(d)]);
    } else if (name == "slice") {
      int64_t dim = a.get_int("dim"), start = a.get_int("start"), end = a.get_int("end"), step = a.get_int("step");
      fout[0] = fx;
      if (fx[size_t(dim)] != kStatic) {
        if (end == x.size(dim)) {
          end = kToEnd;
          if (start != 0 || step != 1) fout[0][size_t(dim)] = kDerived;
        } else {
          fout[0][size_t(dim)] = kStatic;
        }
      }
      out[0] = node1("Slice", {in[0], const_ints({start}), const_ints({end}), const_ints({dim}), const_ints({step})},
                     {});
    } else if (name == "expand") {
      std::vector<int64_t> shape(outs[0].shape().begin(), outs[0].shape().end());
      const size_t lead = shape.size() - size_t(x.dim());
      fout[0] = Flags(shape.size(), kStatic);
      for (size_t d = 0; d < size_t(x.dim()); ++d)
        if (fx[d] != kStatic) shape[lead + d] = 1, fout[0][lead + d] = fx[d];
      out[0] = node1("Expand", {in[0], const_ints(shape)}, {});
    } else if (name == "concat") {
      out[0] = node1("Concat", in, {{"axis", a.get_int("dim")}});
      std::vector<Flags> fs;
      for (const auto& t : ins) fs.push_back(flags_of(t));
      fout[0] = broadcast(fs, size_t(outs[0].dim()));
    } else if (name == "restride") {
      fout[0] = fx;
      if (a.has("drop")) {
        int64_t d = a.get_int("drop");
        out[0] = node1("Squeeze", {in[0], const_ints({d})}, {});
        fout[0].erase(fout[0].begin() + d);
      } else {
        int64_t d = a.get_int("insert");
        out[0] = node1("Unsqueeze", {in[0], const_ints({d})}, {});
        fout[0].insert(fout[0].begin() + d, kStatic);
      }
    } else if (name == "sum" || name == "amax" || name == "amin" || name == "prod" || name == "logsumexp") {
      const auto& dims = a.get_ints("dims");
      bool keep = a.get_bool("keepdim");
      std::string src = in[0];
      if (outs[0].dtype() != x.dtype())
        src = node1("Cast", {src}, {{"to", int64_t(dtype_to_onnx(outs[0].dtype()))}});
      if (name == "sum") {
        out[0] = node1("ReduceSum", {src, const_ints(dims)}, {{"keepdims", int64_t(keep)}});
      } else {
        std::string type = name == "amax" ? "ReduceMax" : name == "amin" ? "ReduceMin"
                           : name == "prod" ? "ReduceProd" : "ReduceLogSumExp";
        out[0] = node1(type, {src}, {{"axes", dims}, {"keepdims", int64_t(keep)}});
      }
      for (size_t d = 0; d < fx.size(); ++d) {
        bool reduced = std::find(dims.begin(), dims.end(), int64_t(d)) != dims.end();
        if (!reduced) fout[0].push_back(fx[d]);
        else if (keep) fout[0].push_back(kStatic);
      }
    } else if (name == "max_dim" || name == "min_dim") {
      int64_t dim = a.get_int("dim");
      int64_t keep = a.get_bool("keepdim");
      bool is_max = name == "max_dim";
      out[0] = node1(is_max ? "ReduceMax" : "ReduceMin", {in[0]}, {{"axes", std::vector<int64_t>{dim}}, {"keepdims", keep}});
      std::string idx = node1(is_max ? "ArgMax" : "ArgMin", {in[0]}, {{"axis", dim}, {"keepdims", keep}});
      if (outs.size() > 1) {
        out[1] = outs[1].dtype() == DType::Int64
                     ? idx
                     : node1("Cast", {idx}, {{"to", int64_t(dtype_to_onnx(outs[1].dtype()))}});
      }
      Flags f = fx;
      if (keep) f[size_t(dim)] = kStatic;
      else f.erase(f.begin() + dim);
      fout[0] = f;
      if (outs.size() > 1) fout[1] = f;
    } else if (name == "gather") {
      out[0] = node1("GatherElements", in, {{"axis", a.get_int("dim")}});
      fout[0] = flags_of(ins[1]);
    } else if (name == "index_select") {
      int64_t dim = a.get_int("dim");
      out[0] = node1("Gather", in, {{"axis", dim}});
      fout[0] = fx;
      if (ins[1].dim() == 1) fout[0][size_t(dim)] = flags_of(ins[1])[0];
    } else if (name == "embedding") {
      out[0] = node1("Gather", {in[0], in[1]}, {{"axis", int64_t(0)}});
      fout[0] = flags_of(ins[1]);
      fout[0].push_back(kStatic);
    } else if (name == "constant_pad" || name == "pad") {
      auto pads = onnx_pads(a.get_ints("pads"), x.dim());
      if (name == "constant_pad") {
        out[0] = node1("Pad", {in[0], const_ints(pads), const_scalar(a.get_float("value"), x.dtype())},
                       {{"mode", std::string("constant")}});
      } else {
        const std::string& mode = a.get_string("mode");
        out[0] = node1("Pad", {in[0], const_ints(pads)}, {{"mode", std::string(mode == "replicate" ? "edge" : mode)}});
      }
      same();
    } else if (name == "cumsum") {
      out[0] = node1("CumSum", {in[0], const_tensor(full({}, double(a.get_int("dim")), DType::Int64))},
                     {{"reverse", int64_t(a.get_bool("reverse"))}});
      same();
    } else if (name == "interpolate") {
      const auto& in_size = a.get_ints("in_size");
      const auto& out_size = a.get_ints("out_size");
      std::vector<float> scales{1.0f, 1.0f};
      for (size_t d = 0; d < 2; ++d) scales.push_back(float(double(out_size[d]) / double(in_size[d])));
      bool linear = a.get_string("mode") == "linear";
      std::map<std::string, AttrValue> at{{"mode", std::string(linear ? "linear" : "nearest")}};
      if (linear) {
        at["coordinate_transformation_mode"] = std::string(a.get_bool("align_corners") ? "align_corners" : "half_pixel");
      } else {
        at["coordinate_transformation_mode"] = std::string("asymmetric");
        at["nearest_mode"] = std::string("floor");
      }
      out[0] = node1("Resize", {in[0], "", const_tensor(from_vector(scales))}, at);
      same();
    } else if (name == "batch_norm") {
      SKIFF_THROW(NotImplementedError,
                  "trace: batch_norm with batch statistics (training mode, or no running statistics) has no ONNX "
                  "lowering; call eval() on the module before tracing");
    } else if (name == "dropout") {
      SKIFF_THROW(NotImplementedError, "trace: dropout in training mode has no ONNX lowering; call eval() on the "
                                       "module before tracing");
    } else {
      SKIFF_THROW(NotImplementedError, "trace: skiff op '{}' has no ONNX lowering (attrs: {})", name, a.str());
    }

    for (size_t i = 0; i < outs.size(); ++i) {
      if (out[i].empty()) {
        unavailable_[&outs[i].impl()] = why_not[i].empty() ? fmt::format("output {} of {} is not traced", i, name)
                                                           : why_not[i];
        keep_unavailable_.push_back(outs[i]);
        continue;
      }
      if (fout[i].size() != size_t(outs[i].dim())) fout[i] = Flags(size_t(outs[i].dim()), kStatic);
      bind(outs[i], out[i], fout[i]);
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
