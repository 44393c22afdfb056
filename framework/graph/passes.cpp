#include "framework/graph/passes.h"

#include <limits>
#include <unordered_set>

#include "framework/graph/fusion.h"
#include "framework/graph/op_registry.h"
#include "framework/ops/ops.h"

namespace skiff::graph {

size_t fold_constants(Graph& g) {
  NoGradGuard no_grad;
  size_t folded = 0;
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (auto& n : g.nodes) {
    const GraphOp* op = find_graph_op(n.op_type);
    bool constant = op && op->foldable;
    for (const auto& in : n.inputs)
      if (!in.empty() && !g.is_initializer(in)) constant = false;
    // Graph outputs produced by constant nodes stay nodes-free initializers too.
    if (!constant) {
      kept.push_back(std::move(n));
      continue;
    }
    std::vector<Tensor> inputs;
    for (const auto& in : n.inputs) inputs.push_back(in.empty() ? Tensor() : g.initializers.at(in));
    std::vector<Tensor> outputs = run_node(n, inputs, g.opset_version);
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      // Own the data: a folded view must not pin (or alias) another initializer.
      g.initializers[n.outputs[i]] = outputs[i].is_contiguous() && outputs[i].offset() == 0
                                         ? outputs[i]
                                         : skiff::detail::contiguous_copy(outputs[i]);
    }
    ++folded;
  }
  g.nodes = std::move(kept);
  return folded;
}

size_t eliminate_dead_nodes(Graph& g) {
  std::unordered_set<std::string> live;
  for (const auto& o : g.outputs) live.insert(o.name);
  std::vector<bool> keep(g.nodes.size(), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    for (const auto& out : n.outputs)
      if (!out.empty() && live.count(out)) keep[i] = true;
    if (keep[i])
      for (const auto& in : n.inputs)
        if (!in.empty()) live.insert(in);
  }
  size_t removed = 0;
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(g.nodes[i]));
    else ++removed;
  }
  g.nodes = std::move(kept);
  for (auto it = g.initializers.begin(); it != g.initializers.end();) {
    if (!live.count(it->first)) it = g.initializers.erase(it);
    else ++it;
  }
  return removed;
}

size_t remove_identities(Graph& g) {
  size_t removed = 0;
  std::unordered_map<std::string, std::string> rename;
  std::vector<Node> kept;
  auto resolve = [&](const std::string& v) {
    auto it = rename.find(v);
    return it == rename.end() ? v : it->second;
  };
  for (auto& n : g.nodes) {
    for (auto& in : n.inputs)
      if (!in.empty()) in = resolve(in);
    bool identity = n.op_type == "Identity" ||
                    (n.op_type == "Dropout" && (n.outputs.size() < 2 || n.outputs[1].empty()) && n.inputs.size() == 1);
    if (identity && !g.is_graph_output(n.outputs[0])) {
      rename[n.outputs[0]] = n.inputs[0];
      ++removed;
      continue;
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
  return removed;
}

namespace {

/// The conv node producing `value` with constant weights, if `value` has exactly one use.
Node* foldable_conv(Graph& g, const std::unordered_map<std::string, size_t>& producer,
                    const std::unordered_map<std::string, int>& uses, const std::string& value) {
  auto p = producer.find(value);
  if (p == producer.end()) return nullptr;
  Node& conv = g.nodes[p->second];
  if (conv.op_type != "Conv" || conv.inputs.size() < 2 || !g.is_initializer(conv.inputs[1])) return nullptr;
  if (conv.inputs.size() > 2 && !conv.inputs[2].empty() && !g.is_initializer(conv.inputs[2])) return nullptr;
  auto u = uses.find(value);
  if (u == uses.end() || u->second != 1 || g.is_graph_output(value)) return nullptr;
  return &conv;
}

}  // namespace

size_t fold_batch_norm_into_conv(Graph& g) {
  NoGradGuard no_grad;
  size_t folded = 0;
  auto producer = g.producers();
  auto uses = g.use_counts();
  std::vector<bool> drop(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& bn = g.nodes[i];
    if (bn.op_type != "BatchNormalization" || bn.inputs.size() < 5 || bn.attr_int("training_mode", 0)) continue;
    bool constant_stats = true;
    for (size_t k = 1; k < 5; ++k) constant_stats &= g.is_initializer(bn.inputs[k]);
    if (!constant_stats || (bn.outputs.size() > 1 && !bn.outputs[1].empty())) continue;
    Node* conv = foldable_conv(g, producer, uses, bn.inputs[0]);
    if (!conv) continue;
    const Tensor& w = g.initializers.at(conv->inputs[1]);
    if (w.dtype() != DType::Float32 && w.dtype() != DType::Float64) continue;
    auto as_w = [&](const std::string& name) { return to(g.initializers.at(name), w.dtype()); };
    Tensor gamma = as_w(bn.inputs[1]), beta = as_w(bn.inputs[2]), mu = as_w(bn.inputs[3]), var = as_w(bn.inputs[4]);
    double eps = bn.attr_float("epsilon", 1e-5f);
    Tensor scale = div(gamma, sqrt(add(var, eps)));  // [O]
    Shape bshape(std::vector<int64_t>(size_t(w.dim()), 1));
    bshape[0] = w.size(0);
    Tensor new_w = contiguous(mul(w, reshape(scale, bshape)));
    Tensor old_b = conv->inputs.size() > 2 && !conv->inputs[2].empty() ? as_w(conv->inputs[2]) : zeros({w.size(0)}, w.dtype());
    Tensor new_b = contiguous(add(mul(sub(old_b, mu), scale), beta));
    // Fresh initializer names: the old weights may be shared with other nodes.
    std::string wname = conv->name + ".folded_weight", bname = conv->name + ".folded_bias";
    g.initializers[wname] = new_w;
    g.initializers[bname] = new_b;
    conv->inputs.resize(3);
    conv->inputs[1] = wname;
    conv->inputs[2] = bname;
    conv->outputs[0] = bn.outputs[0];
    drop[i] = true;
    ++folded;
  }
  if (folded) {
    std::vector<Node> kept;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(kept);
    eliminate_dead_nodes(g);
  }
  return folded;
}

size_t fold_pad_into_conv(Graph& g) {
  if (g.opset_version < 11) return 0;  // pads as attributes: rare in old files, not worth a second path
  auto producer = g.producers();
  auto uses = g.use_counts();
  std::vector<bool> drop(g.nodes.size(), false);
  size_t folded = 0;
  for (auto& conv : g.nodes) {
    const bool max_pool = conv.op_type == "MaxPool";
    if ((conv.op_type != "Conv" && !max_pool) || conv.inputs.empty() ||
        conv.attr_string("auto_pad", "NOTSET") != "NOTSET")
      continue;
    auto p = producer.find(conv.inputs[0]);
    if (p == producer.end() || uses[conv.inputs[0]] != 1 || g.is_graph_output(conv.inputs[0])) continue;
    const Node& pad = g.nodes[p->second];
    if (pad.op_type != "Pad" || pad.attr_string("mode", "constant") != "constant" || pad.inputs.size() < 2 ||
        !g.is_initializer(pad.inputs[1]) || (pad.inputs.size() > 3 && !pad.inputs[3].empty()))
      continue;
    if (pad.inputs.size() > 2 && !pad.inputs[2].empty()) {
      if (!g.is_initializer(pad.inputs[2])) continue;
      const Tensor& v = g.initializers.at(pad.inputs[2]);
      // A max pool pads with -inf in effect; a convolution with zeros.
      if (v.numel() != 1 || v.item<double>() != (max_pool ? -std::numeric_limits<double>::infinity() : 0.0)) continue;
    } else if (max_pool) {
      continue;
    }
    auto pads = g.initializers.at(pad.inputs[1]).to_vector<int64_t>();
    const size_t rank = pads.size() / 2;
    if (rank < 3 || pads.size() != 2 * rank) continue;
    bool spatial_only = pads[0] == 0 && pads[1] == 0 && pads[rank] == 0 && pads[rank + 1] == 0;
    for (auto v : pads) spatial_only &= v >= 0;
    if (!spatial_only) continue;
    const size_t spatial = rank - 2;
    auto conv_pads = conv.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
    if (conv_pads.size() != 2 * spatial) continue;
    for (size_t d = 0; d < spatial; ++d) {
      conv_pads[d] += pads[2 + d];
      conv_pads[spatial + d] += pads[rank + 2 + d];
    }
    conv.attrs["pads"] = conv_pads;
    conv.inputs[0] = pad.inputs[0];
    drop[p->second] = true;
    ++folded;
  }
  if (folded) {
    std::vector<Node> kept;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(kept);
  }
  return folded;
}

size_t optimize(Graph& g, const OptimizeOptions& options) {
  if (options.level <= 0) return 0;
  size_t n = remove_identities(g);
  n += fold_constants(g);
  n += sink_transposes(g);
  n += fold_pad_into_conv(g);
  if (options.level >= 2) {
    n += fold_batch_norm_into_conv(g);
    n += fuse_all(g);
  }
  n += eliminate_dead_nodes(g);
  g.validate();
  return n;
}

}  // namespace skiff::graph
