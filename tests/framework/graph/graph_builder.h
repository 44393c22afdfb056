#pragma once
// Builds small IR graphs for tests: each test states its graph in a few lines.
#include <string>
#include <vector>

#include "framework/graph/ir.h"

namespace skiff::graph::testing {

class GraphBuilder {
 public:
  explicit GraphBuilder(int64_t opset = 13) { g_.opset_version = opset; g_.name = "test"; }

  /// A float32 input; a negative dim is dynamic.
  GraphBuilder& input(const std::string& name, std::vector<int64_t> dims, DType dtype = DType::Float32) {
    ValueInfo v{name, dtype, true, {}};
    for (auto d : dims) v.shape.push_back(d >= 0 ? Dim::fixed(d) : Dim::dynamic("d" + std::to_string(v.shape.size())));
    g_.inputs.push_back(v);
    return *this;
  }
  GraphBuilder& init(const std::string& name, Tensor t) {
    g_.initializers[name] = std::move(t);
    return *this;
  }
  GraphBuilder& node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                     std::map<std::string, AttrValue> attrs = {}) {
    Node n;
    n.op_type = op;
    n.name = op + "_" + std::to_string(g_.nodes.size());
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    n.attrs = std::move(attrs);
    g_.nodes.push_back(std::move(n));
    return *this;
  }
  GraphBuilder& output(const std::string& name, DType dtype = DType::Float32) {
    g_.outputs.push_back(ValueInfo{name, dtype, false, {}});
    return *this;
  }
  Graph build() const {
    g_.validate();
    return g_;
  }

 private:
  Graph g_;
};

}  // namespace skiff::graph::testing
