#include "framework/autograd/engine.h"

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "framework/ops/elementwise/binary.h"
#include "framework/ops/node.h"
#include "framework/ops/op.h"

namespace skiff::autograd {

Tensor detach_grad(const Tensor& g, bool create_graph);

namespace {

struct CaptureTarget {
  Node* node;
  int slot;
  size_t index;  // position in the inputs list
};

struct ReadyOrder {
  bool operator()(Node* a, Node* b) const { return a->sequence_nr < b->sequence_nr; }  // max-heap on seq
};

Tensor accumulate(const Tensor& acc, const Tensor& g) { return acc.defined() ? add(acc, g) : g; }

Tensor run_hooks(const std::vector<GradHook>& hooks, Tensor g) {
  for (const auto& h : hooks) {
    Tensor r = h(g);
    if (r.defined()) g = r;
  }
  return g;
}

/// Runs the backward pass. When `captures` is non-empty (grad() mode), gradients
/// reaching the capture points are returned and leaves are not accumulated.
std::vector<Tensor> run(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots, bool retain_graph,
                        bool create_graph, const std::vector<CaptureTarget>& captures, size_t num_captures) {
  GradModeGuard mode(create_graph);
  const bool grad_mode = !captures.empty() || num_captures > 0;

  // 1. Discover the graph and count dependencies (edges into each node).
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack;
  std::unordered_set<Node*> seen;
  std::vector<std::shared_ptr<Node>> keep_alive;
  for (const auto& r : roots) {
    Node* n = gradient_edge(r).fn.get();
    keep_alive.push_back(gradient_edge(r).fn);
    if (n && seen.insert(n).second) stack.push_back(n);
  }
  std::vector<Node*> order;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (const auto& e : n->next_edges) {
      if (!e.valid()) continue;
      deps[e.fn.get()]++;
      if (seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
    }
  }

  // 2. In grad() mode, only nodes on a path to a capture point need to run.
  std::unordered_set<Node*> needed;
  std::unordered_map<Node*, std::vector<const CaptureTarget*>> capture_at;
  if (grad_mode) {
    for (const auto& c : captures) {
      capture_at[c.node].push_back(&c);
      needed.insert(c.node);
    }
    // Reverse topological sweep: a node is needed if any successor is needed.
    // `order` is a DFS pre-order; iterate until fixed point (graphs are DAGs, small passes).
    bool changed = true;
    while (changed) {
      changed = false;
      for (Node* n : order) {
        if (needed.count(n)) continue;
        for (const auto& e : n->next_edges)
          if (e.valid() && needed.count(e.fn.get())) {
            needed.insert(n);
            changed = true;
            break;
          }
      }
    }
  }

  // 3. Seed the root gradients.
  std::unordered_map<Node*, std::vector<Tensor>> buffers;
  auto buffer_for = [&](Node* n) -> std::vector<Tensor>& {
    auto& b = buffers[n];
    if (b.empty()) b.resize(n->output_meta.size());
    return b;
  };
  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> ready;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    Tensor g;
    if (i < grad_roots.size() && grad_roots[i].defined()) {
      g = grad_roots[i];
      SKIFF_CHECK_SHAPE(g.shape() == r.shape(), "backward: gradient shape {} does not match output shape {}",
                        g.shape(), r.shape());
    } else {
      SKIFF_CHECK(r.numel() == 1, "backward: gradient can be implicitly created only for scalar outputs, got "
                  "shape {}; pass grad_outputs", r.shape());
      g = ones(r.shape(), r.dtype());
    }
    Edge e = gradient_edge(r);
    auto& b = buffer_for(e.fn.get());
    b[size_t(e.input_nr)] = accumulate(b[size_t(e.input_nr)], g);
  }
  for (const auto& r : roots) {
    Node* n = gradient_edge(r).fn.get();
    if (n && deps[n] == 0) {
      deps[n] = -1;  // mark queued
      ready.push(n);
    }
  }

  std::vector<Tensor> results(num_captures);
  // 4. Process nodes in dependency order.
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    std::vector<Tensor> grads = std::move(buffer_for(n));
    buffers.erase(n);
    for (auto& [slot, hooks] : n->pre_hooks)
      if (grads[size_t(slot)].defined()) grads[size_t(slot)] = run_hooks(hooks, grads[size_t(slot)]);
    for (auto& [slot, weak] : n->retained_grads)
      if (auto impl = weak.lock(); impl && grads[size_t(slot)].defined()) {
        Tensor t(impl);
        t.set_grad(accumulate(t.grad(), detach_grad(grads[size_t(slot)], create_graph)));
      }
    if (auto it = capture_at.find(n); it != capture_at.end())
      for (const CaptureTarget* c : it->second) {
        const Tensor& g = grads[size_t(c->slot)];
        if (g.defined()) results[c->index] = accumulate(results[c->index], g);
      }

    auto* acc = dynamic_cast<AccumulateGrad*>(n);
    std::vector<Tensor> input_grads;
    if (acc) {
      if (!grad_mode && grads[0].defined()) {
        Tensor leaf(acc->leaf);
        Tensor g = run_hooks(leaf.impl().autograd().hooks, grads[0]);
        leaf.set_grad(accumulate(leaf.grad(), detach_grad(g, create_graph)));
        for (const auto& hook : leaf.impl().autograd().post_accumulate_hooks) hook(leaf);
      }
    } else if (!grad_mode || needed.count(n)) {
      bool any = false;
      for (size_t i = 0; i < grads.size(); ++i) {
        if (grads[i].defined()) { any = true; continue; }
        if (is_differentiable(n->output_meta[i].dtype)) grads[i] = zeros(n->output_meta[i].shape, n->output_meta[i].dtype);
      }
      if (any) {
        try {
          input_grads = n->apply(grads);
        } catch (Error& e) {
          e.add_context("in the backward of " + n->name());
          throw;
        }
      }
      if (!retain_graph) n->release_saved();
    }

    for (size_t i = 0; i < n->next_edges.size(); ++i) {
      const Edge& e = n->next_edges[i];
      if (!e.valid()) continue;
      Node* next = e.fn.get();
      if (i < input_grads.size() && input_grads[i].defined()) {
        const Tensor& g = input_grads[i];
        const TensorMeta& m = next->output_meta[size_t(e.input_nr)];
        SKIFF_ASSERT(g.shape() == m.shape, "backward of {} produced a gradient of shape {} for an input of shape {}",
                     n->name(), g.shape(), m.shape);
        auto& b = buffer_for(next);
        b[size_t(e.input_nr)] = accumulate(b[size_t(e.input_nr)], g);
      }
      if (--deps[next] == 0) ready.push(next);
    }
  }
  return results;
}

}  // namespace

void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots, bool retain_graph,
              bool create_graph) {
  for (const auto& r : roots)
    SKIFF_CHECK(r.requires_grad(), "backward: output does not require grad (no input of the computation had "
                "requires_grad set, or it ran under NoGradGuard)");
  run(roots, grad_roots, retain_graph || create_graph, create_graph, {}, 0);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool create_graph, bool allow_unused,
                         int retain_graph) {
  for (const auto& r : outputs)
    SKIFF_CHECK(r.requires_grad(), "grad: output does not require grad");
  std::vector<CaptureTarget> captures;
  std::vector<std::shared_ptr<Node>> keep;
  for (size_t i = 0; i < inputs.size(); ++i) {
    SKIFF_CHECK(inputs[i].requires_grad(), "grad: input {} does not require grad", i);
    Edge e = gradient_edge(inputs[i]);
    keep.push_back(e.fn);
    captures.push_back({e.fn.get(), e.input_nr, i});
  }
  bool retain = retain_graph < 0 ? create_graph : retain_graph != 0;
  std::vector<Tensor> res = run(outputs, grad_outputs, retain, create_graph, captures, inputs.size());
  for (size_t i = 0; i < res.size(); ++i) {
    if (res[i].defined()) continue;
    SKIFF_CHECK(allow_unused, "grad: input {} was not used to compute the outputs (pass allow_unused=true)", i);
  }
  return res;
}

// Without create_graph the stored gradient must not keep the backward graph alive.
Tensor detach_grad(const Tensor& g, bool create_graph) {
  if (create_graph || g.is_leaf()) return g;
  return detail::make_view(g, g.shape(), g.strides(), g.offset());
}

}  // namespace skiff::autograd
