#include "framework/graph/op_registry.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "framework/core/registry.h"

namespace skiff::graph {

namespace {
// Filled by static initializers before main and read-only afterwards.
std::unordered_map<std::string, GraphOp>& table() {
  static std::unordered_map<std::string, GraphOp> t;
  return t;
}
}  // namespace

const Tensor& OpContext::input(size_t i) const {
  SKIFF_CHECK(has(i), "{}: input {} is required but missing", node.describe(), i);
  return inputs[i];
}

std::vector<int64_t> OpContext::ints(size_t i) const {
  const Tensor& t = input(i);
  SKIFF_CHECK_DTYPE(t.dtype() == DType::Int64 || t.dtype() == DType::Int32, "{}: input {} must be an integer tensor, "
                    "got {}", node.describe(), i, dtype_name(t.dtype()));
  return t.to_vector<int64_t>();
}

double OpContext::scalar(size_t i) const {
  const Tensor& t = input(i);
  SKIFF_CHECK_SHAPE(t.numel() == 1, "{}: input {} must hold one value, got shape {}", node.describe(), i, t.shape());
  return t.item<double>();
}

void register_graph_op(GraphOp op) {
  std::string key = op.op_type;
  table()[key] = std::move(op);
}

const GraphOp* find_graph_op(const std::string& op_type) {
  auto it = table().find(op_type);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<std::string> graph_op_names() {
  std::vector<std::string> names;
  for (const auto& [k, v] : table()) names.push_back(k);
  std::sort(names.begin(), names.end());
  return names;
}

std::string closest_graph_op(const std::string& op_type) { return closest_match(op_type, graph_op_names()); }

std::vector<Tensor> run_node(const Node& node, const std::vector<Tensor>& inputs, int64_t opset) {
  const GraphOp* op = find_graph_op(node.op_type);
  if (!op) SKIFF_THROW(NotImplementedError, "{}: op '{}' is not supported", node.describe(), node.op_type);
  std::vector<Tensor> out;
  try {
    out = op->run(OpContext{node, inputs, opset});
  } catch (Error& e) {
    e.add_context(fmt::format("while running {}", node.describe()));
    throw;
  }
  // Optional trailing outputs the node does not name may be dropped by the op;
  // every named output must be produced.
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i].empty()) continue;
    SKIFF_ASSERT(i < out.size() && out[i].defined(), "{} produced {} outputs, the node names {}", node.describe(),
                 out.size(), node.outputs.size());
  }
  return out;
}

}  // namespace skiff::graph
