// ONNX models as `skiff ocr --det_model_dir`, `skiff bench model` and the Predictor load
// them: import (protobuf, initializers, external data kept beside the model, attributes),
// the graph passes (constant folding, fusions), the compiled plan, and one run on small
// inputs where the model declares its input shapes (dynamic dims set to 2).
#include <optional>

#include "framework/engine/predictor.h"
#include "framework/graph/onnx_import.h"
#include "framework/tensor/storage.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

constexpr int64_t kMaxInputElements = 4096;

// Inputs for a run, or none when a declared shape is unknown or too large.
std::optional<std::vector<skiff::Tensor>> small_inputs(const std::vector<skiff::graph::ValueInfo>& declared) {
  std::vector<skiff::Tensor> inputs;
  for (const auto& info : declared) {
    if (!info.has_shape) return std::nullopt;
    skiff::Shape shape;
    int64_t numel = 1;
    for (const auto& dim : info.shape) {
      int64_t d = dim.known() ? dim.value : 2;
      if (d > kMaxInputElements || (numel *= std::max<int64_t>(d, 1)) > kMaxInputElements) return std::nullopt;
      shape.push_back(d);
    }
    inputs.push_back(skiff::is_floating(info.dtype) ? skiff::ones(shape, info.dtype) : skiff::zeros(shape, info.dtype));
  }
  return inputs;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A model may declare weights or compute shapes of any size; keep them inside libFuzzer's memory limit.
  // 32 MiB: the same code paths as any larger size, and the corpus no longer drifts toward
  // models that spend a second upsampling to hundreds of MiB (85% of the time at 256 MiB).
  skiff::set_max_tensor_bytes(int64_t(32) << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string model_dir = (skiff::fuzz::scratch_dir() / "onnx").string();
  skiff::fuzz::expect_clean_errors("onnx", [&] {
    skiff::graph::Graph graph = skiff::graph::import_onnx_bytes(skiff::fuzz::as_text(data, size), "fuzz.onnx", model_dir);
    auto inputs = small_inputs(graph.inputs);
    skiff::engine::Predictor predictor(std::move(graph));
    if (inputs) (void)predictor.run(*inputs);
  });
  // The caching allocator keeps what a run freed, by design; across a million different
  // models that is the high-water mark of every shape seen, which libFuzzer's RSS limit
  // takes for a leak. Hand it back past 512 MiB (each time would cost 2/3 of the speed).
  if (skiff::cpu_allocator_stats().reserved_bytes > (int64_t(512) << 20)) skiff::cpu_allocator_empty_cache();
  return 0;
}
