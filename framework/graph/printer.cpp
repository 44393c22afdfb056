#include "framework/graph/printer.h"

#include <algorithm>

namespace skiff::graph {

GraphSummary summarize(const Graph& g) {
  GraphSummary s;
  s.name = g.name;
  s.producer = g.producer;
  s.opset = g.opset_version;
  s.inputs = g.inputs;
  s.outputs = g.outputs;
  s.num_nodes = g.nodes.size();
  s.parameters = g.parameter_count();
  for (const auto& n : g.nodes) {
    ++s.op_histogram[n.op_type];
    if (n.op_type == "Constant" && n.has_attr("value")) {
      const Tensor& t = n.attr_tensor("value");
      if (t.dtype() == DType::Float32 || t.dtype() == DType::Float16 || t.dtype() == DType::Float64) s.parameters += t.numel();
    }
  }
  return s;
}

namespace {
std::vector<std::string> dims_text(const ValueInfo& v) {
  std::vector<std::string> dims;
  for (const auto& d : v.shape) dims.push_back(d.known() ? std::to_string(d.value) : (d.symbol.empty() ? "?" : d.symbol));
  return dims;
}
}  // namespace

std::string format_value(const ValueInfo& v) {
  if (!v.has_shape) return fmt::format("{}: {} (shape unknown)", v.name, dtype_name(v.dtype));
  return fmt::format("{}: {} [{}]", v.name, dtype_name(v.dtype), fmt::join(dims_text(v), ", "));
}

std::string format_summary(const GraphSummary& s) {
  std::string out;
  out += fmt::format("graph     {}\n", s.name.empty() ? "(unnamed)" : s.name);
  if (!s.producer.empty()) out += fmt::format("producer  {}\n", s.producer);
  out += fmt::format("opset     {}\n", s.opset);
  out += "inputs\n";
  for (const auto& v : s.inputs) out += "  " + format_value(v) + "\n";
  out += "outputs\n";
  for (const auto& v : s.outputs) out += "  " + format_value(v) + "\n";
  out += fmt::format("nodes     {}\n", s.num_nodes);
  out += fmt::format("params    {} ({:.2f} M)\n", s.parameters, double(s.parameters) / 1e6);
  out += "ops\n";
  std::vector<std::pair<std::string, int>> ops(s.op_histogram.begin(), s.op_histogram.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [op, n] : ops) out += fmt::format("  {:<24}{:>6}\n", op, n);
  return out;
}

nlohmann::json summary_json(const GraphSummary& s) {
  auto values = [](const std::vector<ValueInfo>& vs) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& v : vs) {
      nlohmann::json shape = nlohmann::json::array();
      for (const auto& d : v.shape) shape.push_back(d.known() ? nlohmann::json(d.value) : nlohmann::json(d.symbol.empty() ? "?" : d.symbol));
      arr.push_back({{"name", v.name}, {"dtype", dtype_name(v.dtype)}, {"shape", v.has_shape ? shape : nlohmann::json()}});
    }
    return arr;
  };
  return {{"name", s.name},           {"producer", s.producer},      {"opset", s.opset},
          {"inputs", values(s.inputs)}, {"outputs", values(s.outputs)}, {"nodes", s.num_nodes},
          {"parameters", s.parameters}, {"ops", s.op_histogram}};
}

namespace {

/// An attribute as JSON: numbers and lists as they are, a tensor as "tensor <shape>".
nlohmann::json attr_json(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor>) return fmt::format("tensor {}", x.shape());
        else return x;
      },
      v);
}

}  // namespace

std::string format_nodes(const Graph& g) {
  std::string out;
  for (const Node& n : g.nodes) {
    std::vector<std::string> ins;
    for (const auto& in : n.inputs) ins.push_back(in.empty() ? "-" : in);
    out += fmt::format("{} '{}'  {} -> {}", n.op_type, n.name, fmt::join(ins, ", "), fmt::join(n.outputs, ", "));
    for (const auto& [key, v] : n.attrs) out += fmt::format("  {}={}", key, attr_json(v).dump());
    out += "\n";
  }
  return out;
}

nlohmann::json nodes_json(const Graph& g) {
  nlohmann::json arr = nlohmann::json::array();
  for (const Node& n : g.nodes) {
    nlohmann::json attrs = nlohmann::json::object();
    for (const auto& [key, v] : n.attrs) attrs[key] = attr_json(v);
    arr.push_back({{"name", n.name}, {"op_type", n.op_type}, {"inputs", n.inputs}, {"outputs", n.outputs},
                   {"attrs", attrs}});
  }
  return arr;
}

}  // namespace skiff::graph
