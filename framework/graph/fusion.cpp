#include "framework/graph/fusion.h"

#include <cmath>
#include <optional>
#include <unordered_set>

#include "framework/graph/ops/fused.h"
#include "framework/graph/passes.h"
#include "framework/ops/ops.h"

namespace skiff::graph {

namespace {

/// Use counts and producers kept up to date while a pass edits nodes in place;
/// removed nodes are marked dead and dropped by finish().
struct Editor {
  Graph& g;
  std::unordered_map<std::string, size_t> producer;
  std::unordered_map<std::string, int> uses;
  std::vector<bool> dead;
  size_t rewrites = 0;

  explicit Editor(Graph& graph) : g(graph), producer(graph.producers()), uses(graph.use_counts()),
                                  dead(graph.nodes.size(), false) {}

  /// The live node producing v, or null (graph input, initializer).
  Node* producer_of(const std::string& v) {
    auto it = producer.find(v);
    if (it == producer.end() || dead[it->second]) return nullptr;
    return &g.nodes[it->second];
  }
  size_t index_of(const std::string& v) const { return producer.at(v); }
  int use_count(const std::string& v) const {
    auto it = uses.find(v);
    return it == uses.end() ? 0 : it->second;
  }
  /// v is used exactly `n` times and is not a graph output.
  bool used_only(const std::string& v, int n) const { return use_count(v) == n && !g.is_graph_output(v); }
  void kill(size_t i) {
    dead[i] = true;
    for (const auto& in : g.nodes[i].inputs)
      if (!in.empty()) --uses[in];
  }
  /// Puts `fused` at slot i (whose old node was killed): it becomes live, its inputs are
  /// counted and it produces its first output.
  void place(size_t i, Node fused) {
    g.nodes[i] = std::move(fused);
    dead[i] = false;
    for (const auto& in : g.nodes[i].inputs)
      if (!in.empty()) ++uses[in];
    producer[g.nodes[i].outputs[0]] = i;
    ++rewrites;
  }
  void set_output(size_t i, const std::string& v) {
    g.nodes[i].outputs.resize(1);
    g.nodes[i].outputs[0] = v;
    producer[v] = i;
  }
  size_t finish() {
    if (rewrites == 0) return 0;
    std::vector<Node> kept;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!dead[i]) kept.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(kept);
    eliminate_dead_nodes(g);
    return rewrites;
  }
};

/// The single value of a float32 initializer with one element and rank <= 1.
std::optional<float> const_scalar(const Graph& g, const std::string& v) {
  if (v.empty() || !g.is_initializer(v)) return std::nullopt;
  const Tensor& t = g.initializers.at(v);
  if (t.numel() != 1 || t.dim() > 1 || t.dtype() != DType::Float32)
    return std::nullopt;
  return float(t.item<double>());
}

bool is_computed(const Graph& g, const std::string& v) { return !v.empty() && !g.is_initializer(v); }

/// A Conv the fusions may rewrite: 2-D, constant float32 weights (and bias), one output.
bool fusable_conv(const Graph& g, const Node& n) {
  if (n.op_type != "Conv" && n.op_type != "skiff.FusedConv") return false;
  if (n.inputs.size() < 2 || !g.is_initializer(n.inputs[1])) return false;
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && !g.is_initializer(n.inputs[2])) return false;
  const Tensor& w = g.initializers.at(n.inputs[1]);
  return w.dim() == 4 && w.dtype() == DType::Float32 && n.outputs.size() == 1;
}

bool has_sum(const Node& n) {
  for (const auto& op : post_ops_of(n))
    if (op.name == "sum") return true;
  return false;
}

/// Appends `steps` to `chain`, merging consecutive linear steps.
void append_steps(std::vector<PostOp>& chain, const std::vector<PostOp>& steps) {
  for (const auto& s : steps) {
    if (s.name == "linear" && !chain.empty() && chain.back().name == "linear") {
      PostOp& l = chain.back();  // a2 * (a1 x + b1) + b2
      l.beta = l.beta * s.alpha + s.beta;
      l.alpha = l.alpha * s.alpha;
      continue;
    }
    chain.push_back(s);
  }
}

std::string fresh_name(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int k = 1; g.is_initializer(name); ++k) name = base + "." + std::to_string(k);
  return name;
}

// ---- fold_conv_affine ----------------------------------------------------------------------

/// Per-output-channel values of constant c for a conv output of rank `rank` with `o`
/// channels, or undefined when c broadcasts differently.
Tensor per_channel(const Tensor& c, int64_t rank, int64_t o, DType dtype) {
  if (c.dtype() != dtype || c.dim() > rank) return Tensor();
  const int64_t ch_axis = c.dim() - (rank - 1);  // channel axis of c when aligned from the right
  for (int64_t d = 0; d < c.dim(); ++d)
    if (c.size(d) != 1 && !(d == ch_axis && c.size(d) == o)) return Tensor();
  return contiguous(expand(reshape(c, Shape{c.numel()}), Shape{o}));
}

}  // namespace

size_t fold_conv_affine(Graph& g) {
  NoGradGuard no_grad;
  Editor ed(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    const bool bn = n.op_type == "BatchNormalization";
    if (n.op_type != "Mul" && n.op_type != "Add" && n.op_type != "Sub" && n.op_type != "Div" && !bn) continue;
    if (n.inputs.size() < 2 || n.outputs.size() != 1) continue;
    // Which input is the conv output: Sub and Div only fold conv - c and conv / c.
    int vi = -1;
    for (int k = 0; k < 2; ++k) {
      if ((n.op_type == "Sub" || n.op_type == "Div" || bn) && k == 1) break;
      if (is_computed(g, n.inputs[size_t(k)]) && g.is_initializer(n.inputs[size_t(1 - k)])) vi = k;
    }
    if (bn) {
      vi = 0;
      bool ok = n.inputs.size() >= 5 && is_computed(g, n.inputs[0]) && !n.attr_int("training_mode", 0);
      for (size_t k = 1; ok && k < 5; ++k) ok = g.is_initializer(n.inputs[k]);
      if (!ok) continue;
    }
    if (vi < 0) continue;
    const std::string& v = n.inputs[size_t(vi)];
    Node* p = ed.producer_of(v);
    if (!p || !ed.used_only(v, 1) || p->outputs.size() != 1) continue;
    const bool transpose = p->op_type == "ConvTranspose";
    if (p->op_type != "Conv" && !transpose) continue;
    if (transpose && bn == false && n.op_type != "Mul" && n.op_type != "Add") continue;
    if (!transpose && bn) continue;  // fold_batch_norm_into_conv handles Conv + BatchNormalization
    if (p->inputs.size() < 2 || !g.is_initializer(p->inputs[1])) continue;
    const bool had_bias = p->inputs.size() > 2 && !p->inputs[2].empty();
    if (had_bias && !g.is_initializer(p->inputs[2])) continue;
    const Tensor& w = g.initializers.at(p->inputs[1]);
    if (w.dtype() != DType::Float32 && w.dtype() != DType::Float64) continue;
    if (transpose && p->attr_int("group", 1) != 1) continue;
    const int64_t o = transpose ? w.size(1) : w.size(0);
    const int64_t rank = w.dim();
    Tensor scale, shift;  // y' = y * scale + shift (y / scale + shift for Div), per channel
    const bool divide = n.op_type == "Div";
    if (bn) {
      auto as_w = [&](size_t k) {
        Tensor t = to(g.initializers.at(n.inputs[k]), w.dtype());
        return t.shape() == Shape{o} ? contiguous(t) : Tensor();
      };
      Tensor gamma = as_w(1), beta = as_w(2), mu = as_w(3), var = as_w(4);
      if (!gamma.defined() || !beta.defined() || !mu.defined() || !var.defined()) continue;
      scale = div(gamma, sqrt(add(var, double(n.attr_float("epsilon", 1e-5f)))));
      shift = sub(beta, mul(mu, scale));
    } else {
      Tensor c = per_channel(g.initializers.at(n.inputs[size_t(1 - vi)]), rank, o, w.dtype());
      if (!c.defined()) continue;
      if (n.op_type == "Mul") scale = c;
      else if (divide) scale = c;
      else if (n.op_type == "Add") shift = c;
      else shift = neg(c);
    }
    Tensor new_w = w;
    if (scale.defined()) {
      Shape bshape(std::vector<int64_t>(size_t(rank), 1));
      bshape[transpose ? 1 : 0] = o;
      new_w = divide ? div(w, reshape(scale, bshape)) : mul(w, reshape(scale, bshape));
    }
    Tensor b = had_bias ? to(g.initializers.at(p->inputs[2]), w.dtype()) : zeros({o}, w.dtype());
    if (b.shape() != Shape{o}) continue;
    if (scale.defined()) b = divide ? div(b, scale) : mul(b, scale);
    if (shift.defined()) b = add(b, shift);
    std::string wname = fresh_name(g, p->name + ".affine_weight"), bname = fresh_name(g, p->name + ".affine_bias");
    g.initializers[wname] = contiguous(new_w);
    g.initializers[bname] = contiguous(b);
    p->inputs.resize(3);
    p->inputs[1] = wname;
    p->inputs[2] = bname;
    ed.kill(i);
    ed.set_output(ed.index_of(v), n.outputs[0]);
    ++ed.rewrites;
  }
  return ed.finish();
}


// ---- fuse_activations ------------------------------------------------------------------------

namespace {

/// An activation pattern ending at one node: its input v, the steps it computes,
/// the other nodes it covers and how many times those nodes (and the end node) read v.
struct Match {
  std::string v;
  std::vector<PostOp> steps;
  std::vector<size_t> covered;
  int v_reads = 1;
  bool linear_only = false;  ///< a scalar Mul/Add/Sub/Div: fused only into an existing chain
};

/// Constant bounds of a Clip node, or nullopt when they are computed.
std::optional<std::pair<float, float>> clip_bounds(const Graph& g, const Node& n) {
  float lo = -INFINITY, hi = INFINITY;
  if (g.opset_version < 11) {
    lo = n.attr_float("min", -std::numeric_limits<float>::max());
    hi = n.attr_float("max", std::numeric_limits<float>::max());
    return std::make_pair(lo, hi);
  }
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    auto c = const_scalar(g, n.inputs[1]);
    if (!c) return std::nullopt;
    lo = *c;
  }
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    auto c = const_scalar(g, n.inputs[2]);
    if (!c) return std::nullopt;
    hi = *c;
  }
  return std::make_pair(lo, hi);
}

/// The live node producing v when v's only use is the pattern being matched.
Node* private_producer(Editor& ed, const std::string& v, const char* op_type) {
  Node* p = ed.producer_of(v);
  if (!p || p->op_type != op_type || p->outputs.size() != 1 || !ed.used_only(v, 1)) return nullptr;
  return p;
}

/// Scalar-constant operand of a binary node and the index of its other input.
std::optional<std::pair<float, int>> scalar_operand(const Graph& g, const Node& n) {
  if (n.inputs.size() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k)
    if (auto c = const_scalar(g, n.inputs[size_t(k)]); c && is_computed(g, n.inputs[size_t(1 - k)]))
      return std::make_pair(*c, 1 - k);
  return std::nullopt;
}

bool near(float a, float b) { return std::fabs(a - b) <= 1e-6f * std::max(1.f, std::fabs(b)); }

/// x * clip(x + 3, 0, 6) ending at node `m` (a Mul of x and the clip; the caller matches the / 6).
std::optional<Match> relu6_core(Editor& ed, const Node& m) {
  const Graph& g = ed.g;
  if (m.op_type != "Mul" || m.inputs.size() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    const std::string& x = m.inputs[size_t(k)];
    const std::string& c = m.inputs[size_t(1 - k)];
    Node* clip = private_producer(ed, c, "Clip");
    if (!clip || !is_computed(g, x)) continue;
    auto b = clip_bounds(g, *clip);
    if (!b || b->first != 0.f || b->second != 6.f) continue;
    Node* add = private_producer(ed, clip->inputs[0], "Add");
    if (!add) continue;
    auto s = scalar_operand(g, *add);
    if (!s || s->first != 3.f || add->inputs[size_t(s->second)] != x) continue;
    Match r;
    r.v = x;
    r.covered = {ed.index_of(c), ed.index_of(clip->inputs[0])};
    r.v_reads = 2;
    r.steps = {{"hardswish", 0.f, 0.f}};
    return r;
  }
  return std::nullopt;
}

/// x * HardSigmoid(x; 1/6, 1/2) ending at the Mul `m`.
std::optional<Match> hard_sigmoid_swish(Editor& ed, const Node& m) {
  const Graph& g = ed.g;
  if (m.op_type != "Mul" || m.inputs.size() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    const std::string& x = m.inputs[size_t(k)];
    const std::string& h = m.inputs[size_t(1 - k)];
    Node* hs = private_producer(ed, h, "HardSigmoid");
    if (!hs || hs->inputs[0] != x || !is_computed(g, x)) continue;
    if (!near(hs->attr_float("alpha", 0.2f), 1.f / 6.f) || !near(hs->attr_float("beta", 0.5f), 0.5f)) continue;
    Match r;
    r.v = x;
    r.covered = {ed.index_of(h)};
    r.v_reads = 2;
    r.steps = {{"hardswish", 0.f, 0.f}};
    return r;
  }
  return std::nullopt;
}

std::optional<Match> match_activation(Editor& ed, size_t i) {
  const Graph& g = ed.g;
  const Node& n = g.nodes[i];
  if (n.outputs.size() != 1 || n.inputs.empty()) return std::nullopt;
  Match r;
  const bool unary_input = is_computed(g, n.inputs[0]);
  if (n.op_type == "Relu" && unary_input) {
    r.v = n.inputs[0];
    r.steps = {{"relu", 0.f, 0.f}};
    return r;
  }
  if (n.op_type == "LeakyRelu" && unary_input) {
    r.v = n.inputs[0];
    r.steps = {{"leaky_relu", n.attr_float("alpha", 0.01f), 0.f}};
    return r;
  }
  if (n.op_type == "Sigmoid" && unary_input) {
    r.v = n.inputs[0];
    r.steps = {{"sigmoid", 0.f, 0.f}};
    return r;
  }
  if (n.op_type == "HardSwish" && unary_input) {
    r.v = n.inputs[0];
    r.steps = {{"hardswish", 0.f, 0.f}};
    return r;
  }
  if (n.op_type == "HardSigmoid" && unary_input) {
    r.v = n.inputs[0];
    r.steps = {{"linear", n.attr_float("alpha", 0.2f), n.attr_float("beta", 0.5f)}, {"clip", 0.f, 1.f}};
    return r;
  }
  if (n.op_type == "Clip" && unary_input) {
    auto b = clip_bounds(g, n);
    if (!b) return std::nullopt;
    r.v = n.inputs[0];
    r.steps = {{"clip", b->first, b->second}};
    return r;
  }
  if (n.op_type == "Div" || n.op_type == "Mul") {
    // hardswish: core / 6 or core * (1/6)
    auto s = scalar_operand(g, n);
    if (s && ((n.op_type == "Div" && s->first == 6.f && s->second == 0) ||
              (n.op_type == "Mul" && near(s->first, 1.f / 6.f)))) {
      const std::string& core = n.inputs[size_t(s->second)];
      Node* m = private_producer(ed, core, "Mul");
      if (m) {
        if (auto hs = relu6_core(ed, *m)) {
          hs->covered.push_back(ed.index_of(core));
          return hs;
        }
      }
    }
  }
  if (n.op_type == "Mul" && n.inputs.size() == 2) {
    if (auto hs = hard_sigmoid_swish(ed, n)) return hs;
    // swish: x * Sigmoid(x) or x * Sigmoid(a * x)
    for (int k = 0; k < 2; ++k) {
      const std::string& x = n.inputs[size_t(k)];
      const std::string& sg = n.inputs[size_t(1 - k)];
      Node* sig = private_producer(ed, sg, "Sigmoid");
      if (!sig || !is_computed(g, x)) continue;
      if (sig->inputs[0] == x) {
        r.v = x;
        r.covered = {ed.index_of(sg)};
        r.v_reads = 2;
        r.steps = {{"swish", 1.f, 0.f}};
        return r;
      }
      Node* scale = private_producer(ed, sig->inputs[0], "Mul");
      if (!scale) continue;
      auto a = scalar_operand(g, *scale);
      if (!a || scale->inputs[size_t(a->second)] != x) continue;
      r.v = x;
      r.covered = {ed.index_of(sg), ed.index_of(sig->inputs[0])};
      r.v_reads = 2;
      r.steps = {{"swish", a->first, 0.f}};
      return r;
    }
  }
  if (n.op_type == "Mul" || n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Div") {
    auto s = scalar_operand(g, n);
    if (!s) return std::nullopt;
    if ((n.op_type == "Sub" || n.op_type == "Div") && s->second != 0) return std::nullopt;  // c - x, c / x
    if (n.op_type == "Div" && s->first == 0.f) return std::nullopt;
    r.v = n.inputs[size_t(s->second)];
    r.linear_only = true;
    if (n.op_type == "Mul") r.steps = {{"linear", s->first, 0.f}};
    else if (n.op_type == "Div") r.steps = {{"linear", 1.f / s->first, 0.f}};
    else if (n.op_type == "Add") r.steps = {{"linear", 1.f, s->first}};
    else r.steps = {{"linear", 1.f, -s->first}};
    return r;
  }
  return std::nullopt;
}

Node make_eltwise(const Node& like, const std::string& input, const std::string& output) {
  Node e;
  e.name = like.name;
  e.op_type = "skiff.Eltwise";
  e.inputs = {input};
  e.outputs = {output};
  return e;
}

}  // namespace

size_t fuse_activations(Graph& g) {
  Editor ed(g);
  // Multi-node patterns first, so their inner Clip/Sigmoid/HardSigmoid are not taken alone.
  for (int phase = 0; phase < 2; ++phase)
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (ed.dead[i]) continue;
    auto m = match_activation(ed, i);
    if (!m || (phase == 0 && m->covered.empty())) continue;
    const std::string out = g.nodes[i].outputs[0];
    Node* p = ed.producer_of(m->v);
    if (p && p->op_type == "skiff.Eltwise" && ed.used_only(m->v, m->v_reads)) {
      std::vector<PostOp> chain = post_ops_of(*p);
      append_steps(chain, m->steps);
      set_post_ops(*p, chain);
      const size_t pi = ed.index_of(m->v);
      for (size_t c : m->covered) ed.kill(c);
      ed.kill(i);
      ed.set_output(pi, out);
      ++ed.rewrites;
      continue;
    }
    if (m->linear_only) continue;
    for (size_t c : m->covered) ed.kill(c);
    ed.kill(i);
    Node e = make_eltwise(g.nodes[i], m->v, out);
    set_post_ops(e, m->steps);
    ed.place(i, std::move(e));
  }
  return ed.finish();
}

// ---- conv fusions --------------------------------------------------------------------------

namespace {

/// Turns a Conv node into a skiff.FusedConv with an empty chain (inputs x, W, B or "").
void to_fused_conv(Node& n) {
  if (n.op_type == "skiff.FusedConv") return;
  n.op_type = "skiff.FusedConv";
  n.inputs.resize(3);
  set_post_ops(n, {});
}

}  // namespace

size_t fuse_conv_activation(Graph& g) {
  Editor ed(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (ed.dead[i] || n.op_type != "skiff.Eltwise") continue;
    const std::string v = n.inputs[0];
    Node* p = ed.producer_of(v);
    if (!p || !fusable_conv(g, *p) || !ed.used_only(v, 1)) continue;
    to_fused_conv(*p);
    std::vector<PostOp> chain = post_ops_of(*p);
    append_steps(chain, post_ops_of(n));
    set_post_ops(*p, chain);
    const std::string out = n.outputs[0];
    ed.kill(i);
    ed.set_output(ed.index_of(v), out);
    ++ed.rewrites;
  }
  return ed.finish();
}

size_t fuse_conv_residual(Graph& g) {
  Editor ed(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (ed.dead[i] || n.op_type != "Add" || n.inputs.size() != 2 || n.outputs.size() != 1) continue;
    if (!is_computed(g, n.inputs[0]) || !is_computed(g, n.inputs[1]) || n.inputs[0] == n.inputs[1]) continue;
    for (int k = 0; k < 2; ++k) {
      const std::string y = n.inputs[size_t(k)], r = n.inputs[size_t(1 - k)];
      Node* p = ed.producer_of(y);
      if (!p || !fusable_conv(g, *p) || !ed.used_only(y, 1) || has_sum(*p)) continue;
      const size_t pi = ed.index_of(y);
      ed.kill(i);
      ed.kill(pi);
      Node fused = std::move(g.nodes[pi]);
      to_fused_conv(fused);
      std::vector<PostOp> chain = post_ops_of(fused);
      chain.push_back({"sum", 0.f, 0.f});
      set_post_ops(fused, chain);
      fused.inputs.push_back(r);
      fused.outputs = n.outputs;
      ed.place(i, std::move(fused));
      break;
    }
  }
  return ed.finish();
}

size_t fuse_channel_mul(Graph& g) {
  Editor ed(g);
  auto is_gate = [&](const std::string& v) {
    const Node* p = ed.producer_of(v);
    if (!p) return false;
    static const std::unordered_set<std::string> gates{"Conv", "skiff.FusedConv", "skiff.Eltwise", "Sigmoid",
                                                       "HardSigmoid"};
    return gates.count(p->op_type) != 0;
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (ed.dead[i] || n.inputs.size() != 2 || n.outputs.size() != 1) continue;
    if (!is_computed(g, n.inputs[0]) || !is_computed(g, n.inputs[1])) continue;
    if (n.op_type == "Mul" && n.inputs[0] != n.inputs[1] && (is_gate(n.inputs[0]) || is_gate(n.inputs[1]))) {
      n.op_type = "skiff.ChannelMul";
      n.attrs.clear();
      n.attrs["residual"] = int64_t(0);
      ++ed.rewrites;
      continue;
    }
    if (n.op_type != "Add") continue;
    for (int k = 0; k < 2; ++k) {
      const std::string x = n.inputs[size_t(k)], m = n.inputs[size_t(1 - k)];
      Node* cm = ed.producer_of(m);
      if (!cm || cm->op_type != "skiff.ChannelMul" || cm->attr_int("residual", 0) || !ed.used_only(m, 1)) continue;
      if (cm->inputs[0] != x && cm->inputs[1] != x) continue;
      if (cm->inputs[1] == x) std::swap(cm->inputs[0], cm->inputs[1]);
      cm->attrs["residual"] = int64_t(1);
      ed.kill(i);
      ed.set_output(ed.index_of(m), n.outputs[0]);
      ++ed.rewrites;
      break;
    }
  }
  return ed.finish();
}

size_t fuse_upsample_add(Graph& g) {
  Editor ed(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (ed.dead[i] || n.outputs.size() != 1) continue;
    if (n.op_type == "Resize" && g.opset_version >= 11 && n.attr_string("mode", "nearest") == "nearest" &&
        n.inputs.size() >= 3 && n.inputs.size() <= 4) {
      n.op_type = "skiff.UpsampleNearest";
      ++ed.rewrites;
      continue;
    }
    if (n.op_type != "Add" || n.inputs.size() != 2 || n.inputs[0] == n.inputs[1]) continue;
    for (int k = 0; k < 2; ++k) {
      const std::string u = n.inputs[size_t(k)], r = n.inputs[size_t(1 - k)];
      Node* up = ed.producer_of(u);
      if (!up || up->op_type != "skiff.UpsampleNearest" || up->inputs.size() > 4 || !ed.used_only(u, 1) ||
          !is_computed(g, r))
        continue;
      const size_t ui = ed.index_of(u);
      ed.kill(i);
      ed.kill(ui);
      Node fused = std::move(g.nodes[ui]);
      fused.inputs.resize(5);
      fused.inputs[4] = r;
      fused.outputs = n.outputs;
      ed.place(i, std::move(fused));
      break;
    }
  }
  return ed.finish();
}

size_t use_fused_convs(Graph& g) {
  size_t changed = 0;
  for (auto& n : g.nodes)
    if (n.op_type == "Conv" && fusable_conv(g, n)) {
      to_fused_conv(n);
      ++changed;
    }
  return changed;
}

// ---- fuse_layer_norm ---------------------------------------------------------------------------

namespace {

/// ReduceMean over the last axis only, keeping dims (axes as an attribute).
bool is_last_axis_mean(const Node& n) {
  return n.op_type == "ReduceMean" && n.inputs.size() == 1 && n.outputs.size() == 1 &&
         n.attr_ints("axes", {}) == std::vector<int64_t>{-1} && n.attr_int("keepdims", 1) == 1;
}

/// A constant (initializer) whose dims are all 1 except possibly the last: it broadcasts along
/// the normalised axis only.
bool is_last_axis_constant(const Graph& g, const std::string& v) {
  if (!g.is_initializer(v)) return false;
  const Tensor& t = g.initializers.at(v);
  if (!is_floating(t.dtype())) return false;
  for (int64_t d = 0; d + 1 < t.dim(); ++d)
    if (t.size(d) != 1) return false;
  return true;
}

}  // namespace

size_t fuse_layer_norm(Graph& g) {
  Editor ed(g);
  std::unordered_map<std::string, std::vector<size_t>> readers;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& in : g.nodes[i].inputs)
      if (!in.empty()) readers[in].push_back(i);
  // The single live reader of v with op type `op` (v used once and not a graph output), or -1.
  auto only_reader = [&](const std::string& v, const char* op) -> long {
    if (!ed.used_only(v, 1)) return -1;
    for (size_t r : readers[v])
      if (!ed.dead[r] && g.nodes[r].op_type == op && g.nodes[r].outputs.size() == 1) return long(r);
    return -1;
  };
  for (size_t i0 = 0; i0 < g.nodes.size(); ++i0) {
    if (ed.dead[i0] || !is_last_axis_mean(g.nodes[i0])) continue;
    const std::string x = g.nodes[i0].inputs[0];
    const long i1 = only_reader(g.nodes[i0].outputs[0], "Sub");  // d = x - mean
    if (i1 < 0 || g.nodes[size_t(i1)].inputs != std::vector<std::string>{x, g.nodes[i0].outputs[0]}) continue;
    const std::string d = g.nodes[size_t(i1)].outputs[0];
    if (!ed.used_only(d, 2)) continue;
    long i2 = -1, i6 = -1;  // d ** 2 and d / sqrt(var + eps)
    for (size_t r : readers[d]) {
      if (ed.dead[r]) continue;
      const Node& n = g.nodes[r];
      if (n.op_type == "Pow" && n.inputs.size() == 2 && n.inputs[0] == d && const_scalar(g, n.inputs[1]) == 2.f)
        i2 = long(r);
      else if (n.op_type == "Div" && n.inputs.size() == 2 && n.inputs[0] == d && n.outputs.size() == 1)
        i6 = long(r);
    }
    if (i2 < 0 || i6 < 0) continue;
    const long i3 = only_reader(g.nodes[size_t(i2)].outputs[0], "ReduceMean");  // var
    if (i3 < 0 || !is_last_axis_mean(g.nodes[size_t(i3)])) continue;
    const long i4 = only_reader(g.nodes[size_t(i3)].outputs[0], "Add");  // var + eps
    if (i4 < 0) continue;
    const Node& add_eps = g.nodes[size_t(i4)];
    const std::string var = g.nodes[size_t(i3)].outputs[0];
    std::optional<float> eps;
    if (add_eps.inputs.size() == 2 && add_eps.inputs[0] == var) eps = const_scalar(g, add_eps.inputs[1]);
    else if (add_eps.inputs.size() == 2 && add_eps.inputs[1] == var) eps = const_scalar(g, add_eps.inputs[0]);
    if (!eps || *eps < 0.f) continue;
    const long i5 = only_reader(add_eps.outputs[0], "Sqrt");
    if (i5 < 0 || g.nodes[size_t(i6)].inputs[1] != g.nodes[size_t(i5)].outputs[0] ||
        !ed.used_only(g.nodes[size_t(i5)].outputs[0], 1))
      continue;
    std::vector<size_t> pattern{i0, size_t(i1), size_t(i2), size_t(i3), size_t(i4), size_t(i5), size_t(i6)};
    // Optional affine tail: * gamma, then + beta (constants along the last axis).
    std::string gamma, beta;
    std::string out = g.nodes[size_t(i6)].outputs[0];
    auto affine = [&](const char* op, std::string& param) {
      const long r = only_reader(out, op);
      if (r < 0) return false;
      const Node& n = g.nodes[size_t(r)];
      if (n.inputs.size() != 2) return false;
      const std::string other = n.inputs[0] == out ? n.inputs[1] : n.inputs[0];
      if (other == out || !is_last_axis_constant(g, other)) return false;
      param = other;
      pattern.push_back(size_t(r));
      out = n.outputs[0];
      return true;
    };
    if (affine("Mul", gamma)) affine("Add", beta);
    const size_t last = pattern.back();
    Node fused;
    fused.name = g.nodes[i0].name;
    fused.op_type = "skiff.LayerNorm";
    fused.inputs = {x, gamma, beta};
    while (fused.inputs.back().empty()) fused.inputs.pop_back();
    fused.outputs = {out};
    fused.attrs["epsilon"] = *eps;
    for (size_t k : pattern) ed.kill(k);
    g.nodes[last] = std::move(fused);
    ed.dead[last] = false;
    for (const auto& in : g.nodes[last].inputs)
      if (!in.empty()) ++ed.uses[in];
    ed.producer[out] = last;
    ++ed.rewrites;
  }
  return ed.finish();
}

// ---- blocked layouts ---------------------------------------------------------------------------

namespace {

/// Channels of v known from the graph alone, for the producers that may hand over blocked
/// values: a fused conv's output channels, the sum over a skiff.ChannelConcat's inputs, or a
/// skiff.ChannelBlocked node's (other than Shape) "channels".
std::optional<int64_t> static_channels(const Graph& g, const std::unordered_map<std::string, size_t>& producer,
                                       const std::string& v) {
  auto it = producer.find(v);
  if (it == producer.end()) return std::nullopt;
  const Node& p = g.nodes[it->second];
  if (p.op_type == "skiff.FusedConv" && fusable_conv(g, p)) return g.initializers.at(p.inputs[1]).size(0);
  if (p.op_type == "skiff.ChannelConcat") {
    int64_t sum = 0;
    for (int64_t c : p.attr_ints("channels")) sum += c;
    return sum;
  }
  if (p.op_type == "skiff.ChannelBlocked" && p.attr_string("inner", "") != "Shape" && p.outputs[0] == v)
    return p.attr_int("channels", 0);
  return std::nullopt;
}

/// Whether node n (default domain, one output) may become a skiff.ChannelBlocked node: the ops
/// with a blocked path, and Shape, which otherwise would keep its input NCHW.
bool channel_blocked_candidate(const Node& n) {
  if (!n.domain.empty() || n.outputs.size() != 1) return false;
  if (n.op_type == "Shape" || n.op_type == "Add") return true;
  if (n.op_type == "MaxPool") return n.attr_ints("kernel_shape").size() == 2;
  if (n.op_type == "Resize") {
    const std::string mode = n.attr_string("mode", "nearest");
    return mode == "linear" || mode == "bilinear";
  }
  return false;
}

}  // namespace

size_t use_channel_blocked_ops(Graph& g) {
  const auto producer = g.producers();
  size_t changed = 0;
  // Nodes are in topological order, so a node sees its producers rewritten first.
  for (auto& n : g.nodes) {
    if (n.op_type == "Concat" && n.outputs.size() == 1 && n.inputs.size() >= 2) {
      const int64_t axis = n.attr_int("axis", 0);
      if (axis != 1 && axis != -3) continue;  // the producers below are all 4-D
      std::vector<int64_t> channels;
      for (const auto& in : n.inputs) {
        const auto c = in.empty() ? std::nullopt : static_channels(g, producer, in);
        if (!c || *c <= 0 || *c % kChannelBlock != 0) break;
        channels.push_back(*c);
      }
      if (channels.size() != n.inputs.size()) continue;
      n.op_type = "skiff.ChannelConcat";
      n.attrs["axis"] = int64_t(1);
      n.attrs["channels"] = channels;
      ++changed;
      continue;
    }
    if (!channel_blocked_candidate(n)) continue;
    const size_t data = channel_blocked_data_inputs(n.op_type);
    if (n.inputs.size() < data) continue;
    std::optional<int64_t> channels;
    bool same = true;
    for (size_t i = 0; i < data; ++i) {
      const auto c = n.inputs[i].empty() ? std::nullopt : static_channels(g, producer, n.inputs[i]);
      same &= c.has_value() && c > 0 && (!channels || c == channels);
      channels = c;
    }
    if (!same) continue;
    n.attrs["inner"] = n.op_type;
    n.attrs["channels"] = *channels;
    n.op_type = "skiff.ChannelBlocked";
    ++changed;
  }
  return changed;
}

size_t select_blocked_layouts(Graph& g) {
  // The layout is the fast kernel's choice: the reference kernel would only reorder back and forth.
  if (!fused_conv2d_prefers_blocked()) return 0;
  std::unordered_map<std::string, std::vector<std::pair<const Node*, size_t>>> readers;
  for (const auto& n : g.nodes)
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (!n.inputs[k].empty()) readers[n.inputs[k]].emplace_back(&n, k);
  // Readers that accept a blocked value: a fused conv's data input and residual, any channel
  // concat input (use_channel_blocked_ops admitted only whole blocks of channels), and the data
  // inputs of skiff.ChannelBlocked nodes.
  auto accepts_blocked = [&](const Node& reader, size_t k) {
    if (reader.op_type == "skiff.ChannelConcat") return true;
    if (reader.op_type == "skiff.ChannelBlocked") return k < channel_blocked_data_inputs(reader.attr_string("inner", ""));
    return reader.op_type == "skiff.FusedConv" && (k == 0 || k == 3) && fusable_conv(g, reader);
  };
  size_t changed = 0;
  for (auto& n : g.nodes) {
    const bool producer = n.op_type == "skiff.FusedConv" || n.op_type == "skiff.ChannelConcat" ||
                          (n.op_type == "skiff.ChannelBlocked" && n.attr_string("inner", "") != "Shape");
    if (!producer || n.outputs.size() != 1 || g.is_graph_output(n.outputs[0])) continue;
    auto it = readers.find(n.outputs[0]);
    if (it == readers.end()) continue;
    bool all_accept = true;
    for (const auto& [reader, k] : it->second) all_accept &= accepts_blocked(*reader, k);
    if (!all_accept || n.attr_int("dst_blocked", 0)) continue;
    n.attrs["dst_blocked"] = int64_t(1);
    ++changed;
  }
  return changed;
}

size_t fuse_all(Graph& g) {
  size_t n = fuse_layer_norm(g);
  n += fold_conv_affine(g);
  n += fuse_activations(g);
  n += fuse_conv_activation(g);
  n += fuse_conv_residual(g);
  n += fuse_conv_activation(g);
  n += fuse_channel_mul(g);
  n += fuse_upsample_add(g);
  n += use_fused_convs(g);
  n += use_channel_blocked_ops(g);
  n += select_blocked_layouts(g);
  return n;
}

}  // namespace skiff::graph
