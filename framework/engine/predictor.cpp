#include "framework/engine/predictor.h"

#include <chrono>

#include "framework/graph/model_import.h"
#include "framework/graph/passes.h"
#include "framework/ops/op.h"

namespace skiff::engine {

Predictor::Predictor(const std::string& model_path, PredictorOptions options)
    : Predictor(graph::import_model(model_path), options) {
  source_ = model_path;
}

Predictor::Predictor(graph::Graph graph, PredictorOptions options) : graph_(std::move(graph)) {
  source_ = graph_.name.empty() ? "model" : graph_.name;
  graph::optimize(graph_, {options.optimization_level});
  compile();
}

void Predictor::compile() {
  std::unordered_map<std::string, int> slot_of;
  auto new_slot = [&](const std::string& name) {
    int s = num_slots_++;
    slot_of[name] = s;
    return s;
  };
  for (const auto& in : graph_.inputs) input_slots_.push_back(new_slot(in.name));
  for (const auto& [name, t] : graph_.initializers) constants_.emplace_back(new_slot(name), t);

  std::vector<int> last_reader;  // per slot: index of the last step reading it
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const graph::Node& n = graph_.nodes[i];
    const graph::GraphOp* op = graph::find_graph_op(n.op_type);
    if (!op)
      SKIFF_THROW(NotImplementedError, "{}: {} uses op '{}', which skiff cannot run", source_, n.describe(), n.op_type);
    Step step{&n, op->run, nullptr, {}, {}, {}};
    if (op->prepare) {
      try {
        step.prepared = op->prepare(n, graph_.opset_version);
      } catch (Error& e) {
        e.add_context(fmt::format("while preparing {} of {}", n.describe(), source_));
        throw;
      }
    }
    for (const auto& in : n.inputs) {
      if (in.empty()) {
        step.inputs.push_back(-1);
        continue;
      }
      auto it = slot_of.find(in);
      SKIFF_ASSERT(it != slot_of.end(), "{} reads undefined value '{}'", n.describe(), in);
      step.inputs.push_back(it->second);
    }
    for (const auto& out : n.outputs) step.outputs.push_back(out.empty() ? -1 : new_slot(out));
    steps_.push_back(std::move(step));
  }
  last_reader.assign(size_t(num_slots_), -1);
  for (size_t i = 0; i < steps_.size(); ++i)
    for (int s : steps_[i].inputs)
      if (s >= 0) last_reader[size_t(s)] = int(i);
  for (const auto& out : graph_.outputs) {
    int s = slot_of.at(out.name);
    output_slots_.push_back(s);
    last_reader[size_t(s)] = int(steps_.size());  // never released
  }
  // Constants and inputs are owned elsewhere; releasing their slot only drops a reference.
  for (int s = 0; s < num_slots_; ++s)
    if (last_reader[size_t(s)] >= 0 && last_reader[size_t(s)] < int(steps_.size()))
      steps_[size_t(last_reader[size_t(s)])].release.push_back(s);
}

void Predictor::check_input(size_t i, const Tensor& t) const {
  const graph::ValueInfo& info = graph_.inputs[i];
  SKIFF_CHECK(t.defined(), "{}: input '{}' is missing", source_, info.name);
  SKIFF_CHECK_DTYPE(t.dtype() == info.dtype, "{}: input '{}' must be {}, got {}", source_, info.name,
                    dtype_name(info.dtype), dtype_name(t.dtype()));
  if (!info.has_shape) return;
  auto declared = [&] {
    std::vector<std::string> dims;
    for (const auto& d : info.shape) dims.push_back(d.known() ? std::to_string(d.value) : (d.symbol.empty() ? "?" : d.symbol));
    return fmt::format("[{}]", fmt::join(dims, ", "));
  };
  SKIFF_CHECK_SHAPE(t.dim() == int64_t(info.shape.size()), "{}: input '{}' must have shape {}, got {}", source_,
                    info.name, declared(), t.shape());
  for (size_t d = 0; d < info.shape.size(); ++d)
    SKIFF_CHECK_SHAPE(!info.shape[d].known() || info.shape[d].value == t.size(int64_t(d)),
                      "{}: input '{}' must have shape {}, got {}", source_, info.name, declared(), t.shape());
}

std::vector<Tensor> Predictor::run(const std::vector<Tensor>& inputs) const { return run(inputs, nullptr); }

std::vector<Tensor> Predictor::run(const std::vector<Tensor>& inputs, RunProfile* profile) const {
  SKIFF_CHECK(inputs.size() == input_slots_.size(), "{}: the model takes {} inputs, got {}", source_,
              input_slots_.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) check_input(i, inputs[i]);
  NoGradGuard no_grad;
  std::vector<Tensor> slots(static_cast<size_t>(num_slots_));
  for (size_t i = 0; i < inputs.size(); ++i) slots[size_t(input_slots_[i])] = inputs[i];
  for (const auto& [s, t] : constants_) slots[size_t(s)] = t;
  std::vector<Tensor> args;
  for (const Step& step : steps_) {
    args.clear();
    for (int s : step.inputs) args.push_back(s >= 0 ? slots[size_t(s)] : Tensor());
    std::vector<Tensor> outs;
    auto t0 = profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    try {
      outs = step.fn(graph::OpContext{*step.node, args, graph_.opset_version, step.prepared.get()});
    } catch (Error& e) {
      e.add_context(fmt::format("while running {} of {}", step.node->describe(), source_));
      throw;
    }
    // The profile's node line carries shapes: one op type costs very different amounts at different sizes.
    std::string shapes;
    if (profile) {
      auto join = [](const std::vector<Tensor>& ts) {
        std::string s;
        for (const Tensor& t : ts) s += (s.empty() ? "" : ", ") + (t.defined() ? t.shape().str() : std::string("-"));
        return s;
      };
      shapes = fmt::format("{} -> {}", join(args), join(outs));
    }
    for (size_t k = 0; k < step.outputs.size(); ++k)
      if (step.outputs[k] >= 0) {
        SKIFF_ASSERT(k < outs.size() && outs[k].defined(), "{} did not produce output {}", step.node->describe(), k);
        slots[size_t(step.outputs[k])] = std::move(outs[k]);
      }
    for (int s : step.release) slots[size_t(s)] = Tensor();
    if (profile) {
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      profile->nodes.push_back({ms, step.node->op_type, fmt::format("{} {}", step.node->describe(), shapes)});
    }
  }
  std::vector<Tensor> result;
  for (int s : output_slots_) result.push_back(slots[size_t(s)]);
  return result;
}

std::unordered_map<std::string, Tensor> Predictor::run(const std::unordered_map<std::string, Tensor>& named) const {
  std::vector<Tensor> ordered;
  for (const auto& in : graph_.inputs) {
    auto it = named.find(in.name);
    SKIFF_CHECK(it != named.end(), "{}: input '{}' is missing", source_, in.name);
    ordered.push_back(it->second);
  }
  for (const auto& [name, t] : named) {
    bool known = false;
    for (const auto& in : graph_.inputs) known |= in.name == name;
    SKIFF_CHECK(known, "{}: the model has no input named '{}'", source_, name);
  }
  auto outs = run(ordered);
  std::unordered_map<std::string, Tensor> result;
  for (size_t i = 0; i < outs.size(); ++i) result[graph_.outputs[i].name] = outs[i];
  return result;
}

}  // namespace skiff::engine
