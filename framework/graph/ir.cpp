#include "framework/graph/ir.h"

#include <unordered_set>

namespace skiff::graph {

namespace {
template <typename T>
const T* find_attr(const Node& n, const std::string& key) {
  auto it = n.attrs.find(key);
  if (it == n.attrs.end()) return nullptr;
  const T* v = std::get_if<T>(&it->second);
  SKIFF_CHECK(v != nullptr, "{}: attribute '{}' has an unexpected type", n.describe(), key);
  return v;
}
}  // namespace

int64_t Node::attr_int(const std::string& key, int64_t fallback) const {
  const auto* v = find_attr<int64_t>(*this, key);
  return v ? *v : fallback;
}

float Node::attr_float(const std::string& key, float fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  // Some exporters write integral float attributes as ints.
  if (const auto* i = std::get_if<int64_t>(&it->second)) return float(*i);
  const auto* v = find_attr<float>(*this, key);
  return *v;
}

std::string Node::attr_string(const std::string& key, const std::string& fallback) const {
  const auto* v = find_attr<std::string>(*this, key);
  return v ? *v : fallback;
}

std::vector<int64_t> Node::attr_ints(const std::string& key, std::vector<int64_t> fallback) const {
  const auto* v = find_attr<std::vector<int64_t>>(*this, key);
  return v ? *v : fallback;
}

std::vector<float> Node::attr_floats(const std::string& key, std::vector<float> fallback) const {
  const auto* v = find_attr<std::vector<float>>(*this, key);
  return v ? *v : fallback;
}

const Tensor& Node::attr_tensor(const std::string& key) const {
  const auto* v = find_attr<Tensor>(*this, key);
  SKIFF_CHECK(v != nullptr, "{}: missing tensor attribute '{}'", describe(), key);
  return *v;
}

std::string Node::describe() const { return fmt::format("node '{}' ({})", name, op_type); }

bool Graph::is_graph_input(const std::string& value) const {
  for (const auto& i : inputs)
    if (i.name == value) return true;
  return false;
}

bool Graph::is_graph_output(const std::string& value) const {
  for (const auto& o : outputs)
    if (o.name == value) return true;
  return false;
}

int64_t Graph::parameter_count() const {
  int64_t n = 0;
  for (const auto& [name, t] : initializers) n += t.numel();
  return n;
}

std::unordered_map<std::string, int> Graph::use_counts() const {
  std::unordered_map<std::string, int> uses;
  for (const auto& n : nodes)
    for (const auto& in : n.inputs)
      if (!in.empty()) ++uses[in];
  for (const auto& o : outputs) ++uses[o.name];
  return uses;
}

std::unordered_map<std::string, size_t> Graph::producers() const {
  std::unordered_map<std::string, size_t> p;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& out : nodes[i].outputs)
      if (!out.empty()) p[out] = i;
  return p;
}

void Graph::validate() const {
  std::unordered_set<std::string> defined;
  for (const auto& i : inputs) {
    SKIFF_CHECK(defined.insert(i.name).second, "graph: input '{}' is declared twice", i.name);
  }
  for (const auto& [name, t] : initializers) defined.insert(name);
  for (const auto& n : nodes) {
    for (const auto& in : n.inputs) {
      SKIFF_CHECK(in.empty() || defined.count(in), "graph: {} reads '{}', which no earlier node, input or "
                  "initializer defines (the graph is not in topological order or is missing a value)",
                  n.describe(), in);
    }
    for (const auto& out : n.outputs) {
      if (out.empty()) continue;
      SKIFF_CHECK(defined.insert(out).second, "graph: {} writes '{}', which is already defined", n.describe(), out);
    }
  }
  for (const auto& o : outputs)
    SKIFF_CHECK(defined.count(o.name), "graph: output '{}' is never produced", o.name);
}

void Graph::name_nodes() {
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto& n = nodes[i];
    if (n.name.empty() || seen.count(n.name)) n.name = fmt::format("{}_{}", n.op_type, i);
    while (seen.count(n.name)) n.name += "_";
    seen.insert(n.name);
  }
}

}  // namespace skiff::graph
