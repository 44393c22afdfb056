// The code shown in docs/ocr.md and docs/inference.md, compiled and checked so the guides stay true.
#include <gtest/gtest.h>

#include <cstdio>

#include "framework/engine/predictor.h"
#include "framework/graph/onnx_import.h"
#include "framework/zoo/zoo.h"
#include "suites/ocr/pipeline.h"

namespace skiff {

TEST(OcrGuideTest, PipelineReadsAnImage) {
  std::vector<std::string> texts;
  // --- guide: ocr ---
  skiff::ocr::PipelineConfig config;            // zoo models, PaddleOCR's defaults
  config.use_textline_orientation = false;
  skiff::ocr::Pipeline ocr(config);              // loads once; run() is thread-safe
  cv::Mat image = skiff::ocr::read_image(std::string(SKIFF_SOURCE_DIR) + "/assets/samples/ocr_sample.png");
  for (const auto& line : ocr.run(image).lines)
    std::printf("%s (%.3f)\n", line.text.c_str(), line.score);
  // --- end ---
  for (const auto& line : ocr.run(image).lines) texts.push_back(line.text);
  ASSERT_EQ(texts.size(), 13u);
  EXPECT_EQ(texts[0], "鲜果时光便利店");
}

TEST(InferenceGuideTest, PredictorRunsAnOnnxModel) {
  std::string path = zoo::fetch_file("ppocr-mobile-v2-cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx").string();
  // --- guide: predictor ---
  skiff::engine::Predictor predictor(path);      // import, optimise, compile once
  skiff::Tensor x = skiff::zeros({4, 3, 48, 192});
  std::vector<skiff::Tensor> outputs = predictor.run({x});   // thread-safe; any batch size
  // outputs[0]: [4, 2] probabilities of 0 and 180 degrees
  // --- end ---
  EXPECT_EQ(outputs[0].shape(), (Shape{4, 2}));
}

}  // namespace skiff
