// GraphModule: graph IR run as a trainable nn::Module (see graph_module.h).
#include "framework/graph/graph_module.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "framework/graph/op_registry.h"
#include "framework/ops/ops.h"

namespace skiff::graph {
namespace {

/// An empty module standing for one dotted prefix of tensor names.
class GraphScope : public nn::Module {
 public:
  std::string type_name() const override { return "GraphScope"; }
};

/// Inputs that are hyper-parameters or statistics rather than weights: a tensor
/// read at one of these is never trained (graph_module.h).
const std::unordered_map<std::string, std::vector<size_t>>& fixed_inputs() {
  static const std::unordered_map<std::string, std::vector<size_t>> m{
      {"BatchNormalization", {3, 4}},
      {"Resize", {1, 2, 3}},
      {"Upsample", {1}},
      {"Clip", {1, 2}},
      {"Pad", {1, 2, 3}},
      {"Reshape", {1}},
      {"Expand", {1}},
      {"Tile", {1}},
      {"Slice", {1, 2, 3, 4}},
      {"Squeeze", {1}},
      {"Unsqueeze", {1}},
      {"Split", {1}},
      {"TopK", {1}},
      {"CumSum", {1}},
      {"Gather", {1}},
      {"GatherElements", {1}},
      {"Range", {0, 1, 2}},
      {"ConstantOfShape", {0}},
      {"ReduceMean", {1}},
      {"ReduceSum", {1}},
      {"ReduceMax", {1}},
      {"ReduceMin", {1}},
      {"ReduceProd", {1}},
      {"ReduceL2", {1}},
      {"ReduceSumSquare", {1}},
      {"ReduceLogSumExp", {1}},
  };
  return m;
}

std::string sanitise(const std::string& part) {
  std::string s = part;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return s.empty() ? "_" : s;
}

std::vector<std::string> split_dots(const std::string& name) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t dot = name.find('.', start);
    parts.push_back(sanitise(name.substr(start, dot - start)));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

}  // namespace

GraphModule::GraphModule(Graph graph, GraphModuleOptions options) : graph_(std::move(graph)) {
  graph_.validate();
  for (const auto& n : graph_.nodes) {
    if (find_graph_op(n.op_type) != nullptr) continue;
    std::string hint = closest_graph_op(n.op_type);
    SKIFF_THROW(NotImplementedError, "GraphModule: {} is not implemented{}", n.describe(),
                hint.empty() ? "" : fmt::format(" (closest: {})", hint));
  }

  // Weight-like tensors: initializers and Constant-node tensors, in order of first use.
  std::unordered_map<std::string, int> constant_node;  // value -> node index
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& n = graph_.nodes[i];
    if (n.op_type == "Constant" && n.outputs.size() == 1 && n.has_attr("value") &&
        std::holds_alternative<Tensor>(n.attrs.at("value")))
      constant_node[n.outputs[0]] = int(i);
  }
  auto is_candidate = [&](const std::string& v) { return graph_.is_initializer(v) || constant_node.count(v); };
  std::vector<std::string> order;
  std::unordered_set<std::string> seen, fixed;
  for (const auto& n : graph_.nodes) {
    auto f = fixed_inputs().find(n.op_type);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const std::string& v = n.inputs[k];
      if (v.empty() || !is_candidate(v)) continue;
      if (seen.insert(v).second) order.push_back(v);
      if (f != fixed_inputs().end() && std::find(f->second.begin(), f->second.end(), k) != f->second.end())
        fixed.insert(v);
    }
  }
  std::vector<std::string> unused;
  for (const auto& [v, t] : graph_.initializers)
    if (!seen.count(v)) unused.push_back(v);
  for (const auto& [v, i] : constant_node)
    if (!seen.count(v)) unused.push_back(v);
  std::sort(unused.begin(), unused.end());
  order.insert(order.end(), unused.begin(), unused.end());

  skip_node_.assign(graph_.nodes.size(), false);
  for (const auto& v : order) {
    auto c = constant_node.find(v);
    const Tensor& t = c != constant_node.end() ? graph_.nodes[size_t(c->second)].attr_tensor("value")
                                               : graph_.initializers.at(v);
    if (!is_floating(t.dtype())) continue;  // shapes, axes, indices: structure, not state
    bool trainable = is_floating(t.dtype()) && t.numel() >= options.min_parameter_elements && !fixed.count(v);
    Tensor& handle = register_tensor(v, t, trainable);
    slots_.push_back({v, &handle, c != constant_node.end() ? c->second : -1});
    if (c != constant_node.end()) skip_node_[size_t(c->second)] = true;
  }

  // Release each intermediate value after its last reader (or its producer, if never read).
  std::unordered_map<std::string, size_t> last;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    for (const auto& v : graph_.nodes[i].outputs) last[v] = i;
    for (const auto& v : graph_.nodes[i].inputs)
      if (!v.empty()) last[v] = i;
  }
  release_after_.assign(graph_.nodes.size(), {});
  for (const auto& [v, i] : last)
    if (!graph_.is_graph_output(v) && !graph_.is_graph_input(v) && !keys_.count(v)) release_after_[i].push_back(v);
}

Tensor& GraphModule::register_tensor(const std::string& value, const Tensor& t, bool trainable) {
  // Children and tensors of a module share one namespace.
  auto taken = [](nn::Module* m, const std::string& name) {
    for (const auto& [n, c] : m->named_children())
      if (n == name) return true;
    for (const auto& [n, p] : m->named_parameters(false))
      if (n == name) return true;
    for (const auto& [n, b] : m->named_buffers(false))
      if (n == name) return true;
    return false;
  };
  auto is_child = [](nn::Module* m, const std::string& name) {
    for (const auto& [n, c] : m->named_children())
      if (n == name) return true;
    return false;
  };

  std::vector<std::string> parts = split_dots(value);
  nn::Module* scope = this;
  std::string prefix;
  bool nested = true;
  // Walk (creating) the child modules of the prefix; any clash with a tensor name falls back to a flat name.
  for (size_t i = 0; i + 1 < parts.size() && nested; ++i) {
    std::string path = prefix.empty() ? parts[i] : prefix + "." + parts[i];
    auto it = scopes_.find(path);
    if (it != scopes_.end()) {
      scope = it->second;
    } else if (taken(scope, parts[i])) {
      nested = false;
    } else {
      auto child = scope->register_module(parts[i], std::make_shared<GraphScope>());
      scopes_[path] = child.get();
      scope = child.get();
    }
    prefix = path;
  }
  std::string leaf = parts.back();
  if (nested && taken(scope, leaf)) nested = false;
  if (!nested) {
    scope = this;
    prefix.clear();
    std::string flat = parts[0];
    for (size_t i = 1; i < parts.size(); ++i) flat += "_" + parts[i];
    leaf = flat;
    for (int k = 1; taken(this, leaf) || is_child(this, leaf); ++k) leaf = fmt::format("{}_{}", flat, k);
  }
  keys_[value] = prefix.empty() ? leaf : prefix + "." + leaf;
  Tensor copy = skiff::detail::contiguous_copy(t);
  return trainable ? scope->register_parameter(leaf, copy, true) : scope->register_buffer(leaf, copy);
}

std::vector<Tensor> GraphModule::forward(const std::vector<Tensor>& inputs) {
  SKIFF_CHECK(inputs.size() == graph_.inputs.size(), "GraphModule: the graph '{}' takes {} inputs, got {}",
              graph_.name, graph_.inputs.size(), inputs.size());
  std::unordered_map<std::string, Tensor> env;
  for (const auto& [name, t] : graph_.initializers) env[name] = t;  // the module's own ones replace these
  for (const auto& s : slots_) env[s.value] = *s.tensor;
  for (size_t i = 0; i < inputs.size(); ++i) env[graph_.inputs[i].name] = inputs[i];
  const int64_t opset = graph_.opset_version > 0 ? graph_.opset_version : 13;
  std::vector<Tensor> args;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (skip_node_[i]) continue;
    const Node& n = graph_.nodes[i];
    args.clear();
    for (const auto& v : n.inputs) {
      if (v.empty()) {
        args.emplace_back();
        continue;
      }
      auto it = env.find(v);
      SKIFF_ASSERT(it != env.end(), "GraphModule: {} reads '{}' before it is computed", n.describe(), v);
      args.push_back(it->second);
    }
    std::vector<Tensor> outs = run_node(n, args, opset);
    for (size_t k = 0; k < n.outputs.size() && k < outs.size(); ++k)
      if (!n.outputs[k].empty()) env[n.outputs[k]] = std::move(outs[k]);
    for (const auto& v : release_after_[i]) env.erase(v);
  }
  std::vector<Tensor> results;
  for (const auto& o : graph_.outputs) results.push_back(env.at(o.name));
  return results;
}

Tensor GraphModule::forward(const Tensor& x) {
  SKIFF_CHECK(graph_.outputs.size() == 1, "GraphModule: forward(x) needs a graph with one output, '{}' has {}",
              graph_.name, graph_.outputs.size());
  return forward(std::vector<Tensor>{x})[0];
}

Graph GraphModule::to_graph() const {
  Graph g = graph_;
  for (const auto& s : slots_) {
    Tensor v = skiff::detail::contiguous_copy(*s.tensor);
    if (s.node >= 0) g.nodes[size_t(s.node)].attrs["value"] = v;
    else g.initializers[s.value] = v;
  }
  return g;
}

}  // namespace skiff::graph
