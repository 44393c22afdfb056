#include "framework/serve/model_endpoint.h"

#include "framework/core/error.h"
#include "framework/engine/predictor.h"
#include "framework/ops/shape/shape_ops.h"
#include "framework/serve/request_fields.h"
#include "framework/serve/tensor_json.h"
#include "framework/zoo/zoo.h"

namespace skiff::serve {
namespace {

using nlohmann::json;

struct PredictInput {
  std::vector<Tensor> tensors;  // in the model's input order
  bool binary = false;
};

std::string describe_dims(const graph::ValueInfo& v) {
  if (!v.has_shape) return "?";
  std::string s;
  for (const auto& d : v.shape) s += (s.empty() ? "" : ",") + (d.known() ? std::to_string(d.value) : d.symbol.empty() ? "?" : d.symbol);
  return "[" + s + "]";
}

json value_info_json(const graph::ValueInfo& v) {
  json shape = json::array();
  if (v.has_shape)
    for (const auto& d : v.shape) shape.push_back(d.known() ? json(d.value) : json(d.symbol.empty() ? "?" : d.symbol));
  return {{"name", v.name}, {"dtype", dtype_name(v.dtype)}, {"shape", v.has_shape ? shape : json(nullptr)}};
}

class ModelEndpoint final : public Endpoint {
 public:
  ModelEndpoint(std::shared_ptr<const engine::Predictor> predictor, std::string source)
      : predictor_(std::move(predictor)), source_(std::move(source)) {
    batchable_ = !predictor_->inputs().empty();
    for (const auto& in : predictor_->inputs())
      batchable_ = batchable_ && in.has_shape && !in.shape.empty() && !in.shape[0].known();
  }

  std::string prepare(Call& call, const RequestLimits&) const override {
    check_fields(call.request, {"inputs", "binary"});
    const json& inputs = call.request.contains("inputs") ? call.request["inputs"] : json();
    SKIFF_CHECK(inputs.is_object(), "inputs: required, an object mapping each input name to a tensor ({})",
                input_names());
    PredictInput in;
    in.binary = optional_bool(call.request, "binary").value_or(false);
    for (const auto& item : inputs.items()) {
      const std::string name = item.key();  // not a structured binding: clang 14 cannot capture those
      const bool known = std::any_of(predictor_->inputs().begin(), predictor_->inputs().end(),
                                     [&](const graph::ValueInfo& i) { return i.name == name; });
      SKIFF_CHECK(known, "inputs.{}: the model has no such input (its inputs: {})", name, input_names());
    }
    std::string key;
    bool has_rows = true;  // a scalar input has no first dimension to batch along
    for (const auto& info : predictor_->inputs()) {
      auto it = inputs.find(info.name);
      SKIFF_CHECK(it != inputs.end(), "inputs.{}: required (the model's inputs: {})", info.name, input_names());
      Tensor t = tensor_from_json(*it, "inputs." + info.name);
      key += fmt::format("{}:{}:", dtype_name(t.dtype()), t.dim());
      for (int64_t d = 1; d < t.dim(); ++d) key += fmt::format("{},", t.shape()[d]);
      key += ';';
      has_rows = has_rows && t.dim() > 0;
      in.tensors.push_back(std::move(t));
    }
    key += in.binary ? "b" : "n";
    call.input = std::move(in);
    return batchable_ && has_rows ? key : std::string();
  }

  void run(std::span<Call* const> calls) const override {
    if (calls.size() > 1 && run_batched(calls)) return;
    for (Call* call : calls) {
      const auto& in = std::any_cast<const PredictInput&>(call->input);
      answer(*call, predictor_->run(in.tensors), in.binary);
    }
  }

  json describe() const override {
    json inputs = json::array(), outputs = json::array();
    for (const auto& v : predictor_->inputs()) inputs.push_back(value_info_json(v));
    for (const auto& v : predictor_->outputs()) outputs.push_back(value_info_json(v));
    return {{"source", source_}, {"inputs", inputs}, {"outputs", outputs}, {"batching", batchable_}};
  }

 private:
  std::string input_names() const {
    std::string s;
    for (const auto& v : predictor_->inputs()) s += (s.empty() ? "" : ", ") + v.name + " " + describe_dims(v);
    return s;
  }

  void answer(Call& call, const std::vector<Tensor>& outputs, bool binary) const {
    json out = json::object();
    for (size_t i = 0; i < outputs.size(); ++i) out[predictor_->outputs()[i].name] = tensor_to_json(outputs[i], binary);
    call.result = {{"outputs", std::move(out)}};
  }

  /// One run for the whole batch; false (nothing answered) when an output is not batch-major.
  bool run_batched(std::span<Call* const> calls) const {
    std::vector<int64_t> rows;
    for (Call* call : calls) {
      const auto& in = std::any_cast<const PredictInput&>(call->input);
      if (in.tensors.empty() || in.tensors[0].dim() == 0) return false;
      rows.push_back(in.tensors[0].shape()[0]);
    }
    int64_t total = 0;
    for (int64_t r : rows) total += r;
    std::vector<Tensor> batched;
    for (size_t i = 0; i < predictor_->inputs().size(); ++i) {
      std::vector<Tensor> parts;
      for (Call* call : calls) {
        const Tensor& t = std::any_cast<const PredictInput&>(call->input).tensors[i];
        if (t.shape()[0] != rows[parts.size()]) return false;  // inputs of one request disagree on the batch size
        parts.push_back(t);
      }
      batched.push_back(concat(parts, 0));
    }
    std::vector<Tensor> outputs = predictor_->run(batched);
    for (const Tensor& o : outputs)
      if (o.dim() == 0 || o.shape()[0] != total) return false;
    std::vector<std::vector<Tensor>> per_call(calls.size());
    for (const Tensor& o : outputs) {
      int64_t at = 0;
      for (size_t c = 0; c < calls.size(); ++c) {
        per_call[c].push_back(narrow(o, 0, at, rows[c]));  // a view: tensor_to_json copies what it sends
        at += rows[c];
      }
    }
    for (size_t c = 0; c < calls.size(); ++c)
      answer(*calls[c], per_call[c], std::any_cast<const PredictInput&>(calls[c]->input).binary);
    return true;
  }

  std::shared_ptr<const engine::Predictor> predictor_;
  std::string source_;
  bool batchable_ = false;
};

}  // namespace

std::unique_ptr<Endpoint> make_model_endpoint(std::shared_ptr<const engine::Predictor> predictor,
                                              std::string source) {
  return std::make_unique<ModelEndpoint>(std::move(predictor), std::move(source));
}

std::unique_ptr<Endpoint> make_model_endpoint(const std::string& path_or_zoo_name) {
  const std::string path = zoo::resolve_model_path(path_or_zoo_name).string();
  return make_model_endpoint(std::make_shared<const engine::Predictor>(path), path_or_zoo_name);
}

}  // namespace skiff::serve
