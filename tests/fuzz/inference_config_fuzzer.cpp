// The inference.yml beside an exported model, as `skiff ocr --det_model_dir` /
// `--rec_model_dir` and `skiff det --model_dir` read it. The first byte picks the reader
// (OCR detection, OCR recognition, detection), the rest is the file.
#include "suites/detection/deploy_config.h"
#include "suites/ocr/det_inference_config.h"
#include "suites/ocr/rec_inference_config.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto yml = skiff::fuzz::write_scratch_file("model/inference.yml", skiff::fuzz::as_text(data + 1, size - 1));
  // The detection reader wants a model file beside the config; it is not opened.
  static const auto onnx = skiff::fuzz::write_scratch_file("model/inference.onnx", "");
  skiff::fuzz::expect_clean_errors("inference_config", [&] {
    switch (data[0] % 3) {
      case 0: (void)skiff::ocr::read_det_inference_config(yml); break;
      case 1: (void)skiff::ocr::read_rec_inference_config(yml); break;
      default: (void)skiff::detection::read_deploy_config(yml.parent_path()); break;
    }
  });
  return 0;
}
