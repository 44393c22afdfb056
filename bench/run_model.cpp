// skiff_run_model: runs an ONNX model with skiff's Predictor on seeded inputs (the
// shapes `skiff bench model --input` takes) and writes the inputs and every output
// to safetensors files, so bench/compare_models.sh can feed the same inputs to ONNX
// Runtime (tests/tools/ort/run_model.mjs) and check that both compute the same
// outputs before it compares their times.
//
//   skiff_run_model MODEL.onnx --input NAME:DIMS [--input ...] INPUTS.safetensors OUTPUTS.safetensors
// Inputs are uniform in [-1, 1) from Generator(seed 1), float32.
#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "framework/core/rng.h"
#include "framework/engine/predictor.h"
#include "framework/io/safetensors.h"
#include "framework/ops/ops.h"

namespace {

std::pair<std::string, skiff::Shape> parse_spec(const std::string& spec) {
  auto colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0) throw std::runtime_error("--input '" + spec + "': expected NAME:DIMS");
  std::vector<int64_t> dims;
  std::string rest = spec.substr(colon + 1);
  size_t pos = 0;
  while (true) {
    size_t next = rest.find('x', pos);
    dims.push_back(std::stoll(rest.substr(pos, next == std::string::npos ? std::string::npos : next - pos)));
    if (dims.back() <= 0) throw std::runtime_error("--input '" + spec + "': dims must be positive");
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return {spec.substr(0, colon), skiff::Shape(dims)};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional, specs;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--input") == 0 && i + 1 < argc) specs.push_back(argv[++i]);
    else positional.push_back(argv[i]);
  }
  if (positional.size() != 3 || specs.empty()) {
    fmt::print(stderr, "usage: skiff_run_model MODEL.onnx --input NAME:DIMS [...] INPUTS.safetensors OUTPUTS.safetensors\n");
    return 2;
  }
  try {
    skiff::engine::Predictor predictor(positional[0]);
    skiff::Generator gen(1);
    skiff::io::TensorMap inputs;
    for (const auto& s : specs) {
      auto [name, shape] = parse_spec(s);
      inputs[name] = skiff::rand(shape, skiff::DType::Float32, &gen, -1.0, 1.0);
    }
    std::vector<skiff::Tensor> ordered;
    for (const auto& in : predictor.inputs()) {
      if (!inputs.count(in.name)) throw std::runtime_error("model input '" + in.name + "' has no --input");
      ordered.push_back(inputs.at(in.name));
    }
    std::vector<skiff::Tensor> outs = predictor.run(ordered);
    skiff::io::TensorMap outputs;
    for (size_t i = 0; i < outs.size(); ++i) outputs[predictor.outputs().at(i).name] = outs[i];
    skiff::io::save_safetensors(positional[1], inputs);
    skiff::io::save_safetensors(positional[2], outputs, {{"producer", "skiff"}});
  } catch (const std::exception& e) {
    fmt::print(stderr, "skiff_run_model: {}\n", e.what());
    return 1;
  }
  return 0;
}
