// sink_transposes: removes the Transpose pairs that layout conversions leave
// behind (TF.js and tf2onnx models wrap every NHWC convolution in transposes).
#include <unordered_set>

#include "framework/graph/passes.h"
#include "framework/ops/ops.h"

namespace skiff::graph {
namespace {

/// Element-wise ops a transpose commutes with when their other inputs are constants.
bool is_elementwise(const std::string& op) {
  static const std::unordered_set<std::string> ops{
      "Relu",  "LeakyRelu", "Sigmoid", "Tanh", "Elu",  "Exp",         "Log",         "Neg",       "Abs",
      "Sqrt",  "Reciprocal", "Floor",  "Ceil", "Round", "Erf",        "Sign",        "Softplus",  "HardSigmoid",
      "HardSwish", "Gelu",  "Sin",     "Cos",  "Clip", "Add",         "Sub",         "Mul",       "Div",
      "Pow",   "Max",       "Min",     "PRelu"};
  return ops.count(op) != 0;
}

std::vector<int64_t> perm_of(const Node& t) { return t.attr_ints("perm"); }

/// perm of Transpose(Transpose(x, first), second).
std::vector<int64_t> compose(const std::vector<int64_t>& first, const std::vector<int64_t>& second) {
  std::vector<int64_t> out(second.size());
  for (size_t i = 0; i < second.size(); ++i) out[i] = first[size_t(second[i])];
  return out;
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != int64_t(i)) return false;
  return true;
}

class Sinker {
 public:
  explicit Sinker(Graph& g) : g_(g) {
    for (const auto& o : g.outputs) outputs_.insert(o.name);
  }

  size_t run() {
    size_t changed = 0;
    for (bool again = true; again;) {
      again = false;
      index();
      for (size_t i = 0; i < g_.nodes.size(); ++i) {
        if (dead_[i] || g_.nodes[i].op_type != "Transpose" || !g_.nodes[i].has_attr("perm")) continue;
        if (try_sink(i)) {
          ++changed;
          again = true;
          break;  // indices changed: rebuild them
        }
      }
      finish();
    }
    return changed;
  }

 private:
  void index() {
    producer_ = g_.producers();
    consumers_.clear();
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      for (const auto& in : g_.nodes[i].inputs)
        if (!in.empty()) consumers_[in].push_back(i);
    dead_.assign(g_.nodes.size(), false);
  }

  const std::vector<size_t>& consumers(const std::string& v) {
    static const std::vector<size_t> none;
    auto it = consumers_.find(v);
    return it == consumers_.end() ? none : it->second;
  }

  /// Whether node m can take the transpose on its input `v` through it.
  bool commutes(const Node& m, const std::string& v, size_t rank) const {
    if (!is_elementwise(m.op_type) || m.outputs.size() != 1) return false;
    int data_inputs = 0;
    for (const auto& in : m.inputs) {
      if (in.empty()) continue;
      if (in == v) {
        ++data_inputs;
        continue;
      }
      auto it = g_.initializers.find(in);
      if (it == g_.initializers.end() || size_t(it->second.dim()) > rank) return false;
    }
    return data_inputs == 1;
  }

  /// Sinks Transpose t through a chain of single-use element-wise nodes when
  /// every consumer at the end of the chain is a Transpose that undoes it, or
  /// merges t into a following Transpose.
  bool try_sink(size_t t) {
    const Node& tn = g_.nodes[t];
    const std::vector<int64_t> perm = perm_of(tn);
    std::vector<size_t> chain;
    std::string cur = tn.outputs[0];
    while (true) {
      if (outputs_.count(cur)) return false;
      const auto& users = consumers(cur);
      if (users.size() == 1 && commutes(g_.nodes[users[0]], cur, perm.size())) {
        chain.push_back(users[0]);
        cur = g_.nodes[users[0]].outputs[0];
        continue;
      }
      if (users.empty()) return false;
      bool all_inverse = true;
      for (size_t u : users) {
        const Node& m = g_.nodes[u];
        all_inverse &= m.op_type == "Transpose" && m.has_attr("perm") && is_identity(compose(perm, perm_of(m)));
      }
      if (all_inverse) return rewrite(t, chain, users);
      // Transpose(Transpose(x)) with a perm that is not the identity: one transpose.
      if (chain.empty() && users.size() == 1 && g_.nodes[users[0]].op_type == "Transpose" &&
          g_.nodes[users[0]].has_attr("perm")) {
        Node& m = g_.nodes[users[0]];
        m.attrs["perm"] = compose(perm, perm_of(m));
        m.inputs[0] = tn.inputs[0];
        return true;
      }
      return false;
    }
  }

  bool rewrite(size_t t, const std::vector<size_t>& chain, const std::vector<size_t>& inverses) {
    NoGradGuard no_grad;
    const Node tn = g_.nodes[t];
    const std::vector<int64_t> perm = perm_of(tn);
    std::vector<int64_t> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inverse[size_t(perm[i])] = int64_t(i);
    std::string prev = tn.inputs[0], cur = tn.outputs[0];
    for (size_t k : chain) {
      Node& m = g_.nodes[k];
      for (auto& in : m.inputs) {
        if (in.empty()) continue;
        if (in == cur) {
          in = prev;
          continue;
        }
        // The constant sees the untransposed layout: rank-extend it, then undo perm.
        const Tensor& c = g_.initializers.at(in);
        std::vector<int64_t> shape(perm.size() - size_t(c.dim()), 1);
        for (int64_t d = 0; d < c.dim(); ++d) shape.push_back(c.size(d));
        std::string name = m.name + "/" + in + ".untransposed";
        g_.initializers[name] = contiguous(permute(reshape(c, Shape(shape)), inverse));
        in = name;
      }
      prev = cur = m.outputs[0];
    }
    // `prev` now holds the untransposed value the inverse transposes produced.
    for (size_t u : inverses) {
      Node& m = g_.nodes[u];
      if (outputs_.count(m.outputs[0])) {
        m.op_type = "Identity";
        m.attrs.clear();
        m.inputs = {prev};
      } else {
        rename_[m.outputs[0]] = prev;
        dead_[u] = true;
      }
    }
    if (!chain.empty() || consumers(tn.outputs[0]).size() == inverses.size()) dead_[t] = true;
    return true;
  }

  /// Drops dead nodes and applies renames.
  void finish() {
    std::vector<Node> kept;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (!dead_[i]) kept.push_back(std::move(g_.nodes[i]));
    g_.nodes = std::move(kept);
    for (auto& n : g_.nodes)
      for (auto& in : n.inputs) {
        auto it = rename_.find(in);
        while (it != rename_.end()) {
          in = it->second;
          it = rename_.find(in);
        }
      }
    rename_.clear();
    dead_.assign(g_.nodes.size(), false);
  }

  Graph& g_;
  std::unordered_set<std::string> outputs_;
  std::unordered_map<std::string, size_t> producer_;
  std::unordered_map<std::string, std::vector<size_t>> consumers_;
  std::vector<bool> dead_;
  std::unordered_map<std::string, std::string> rename_;
};

}  // namespace

size_t sink_transposes(Graph& g) { return Sinker(g).run(); }

}  // namespace skiff::graph
