#pragma once
/// \file model_endpoint.h
/// POST /v1/models/<name>:predict: one model (ONNX, TF.js, or a zoo name) run by
/// the Predictor on the tensors of the request.
///
///   request:  {"inputs": {"x": {"shape": [1, 4], "data": [...]}}, "binary": false}
///   result:   {"outputs": {"y": {"shape": [1, 2], "dtype": "float32", "data": [...]}}}
///
/// Tensors are laid out as tensor_json.h says; "binary": true answers with "b64".
/// When every input's first dimension is dynamic, requests whose inputs agree in
/// dtype and in every other dimension are batched: concatenated along the first
/// dimension, run once, and split again (only when every output is batch-major too;
/// otherwise they run one by one).

#include <memory>
#include <string>

#include "framework/serve/endpoint.h"

namespace skiff::engine {
class Predictor;
}

namespace skiff::serve {

/// Loads the model at `path_or_zoo_name`. \throws like engine::Predictor / zoo::resolve_model_path.
std::unique_ptr<Endpoint> make_model_endpoint(const std::string& path_or_zoo_name);
/// Serves an already loaded predictor.
std::unique_ptr<Endpoint> make_model_endpoint(std::shared_ptr<const engine::Predictor> predictor,
                                              std::string source);

}  // namespace skiff::serve
