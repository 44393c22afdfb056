// The C API as a C program sees it: statuses and messages for every misuse, tensors
// in and out of a real model, a pipeline by name. (The OCR examples in examples/ run
// the pipelines on real models; this test needs no download.)
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <vector>
#include <string>

#include "framework/graph/onnx_export.h"
#include "skiff/skiff_c.h"
#include "tests/framework/serve/affine_graph.h"
#include "tests/temp_dir.h"

namespace {

std::string last_error() { return skiff_last_error(); }

TEST(CApi, VersionsMatchTheHeader) {
  EXPECT_EQ(skiff_api_version(), SKIFF_C_API_VERSION);
  EXPECT_GT(std::strlen(skiff_version()), 0u);
}

TEST(CApi, ErrorsAreStatusesWithMessagesNamingTheInput) {
  skiff_model* model = nullptr;
  EXPECT_EQ(skiff_model_load("/no/such/model.onnx", &model), SKIFF_ERROR_BAD_INPUT);
  EXPECT_EQ(model, nullptr);
  EXPECT_NE(last_error().find("/no/such/model.onnx"), std::string::npos) << last_error();
  EXPECT_EQ(skiff_model_load(nullptr, &model), SKIFF_ERROR_BAD_INPUT);
  EXPECT_NE(last_error().find("path_or_zoo_name: NULL"), std::string::npos) << last_error();
  skiff_pipeline* p = nullptr;
  EXPECT_EQ(skiff_pipeline_load("orc", nullptr, &p), SKIFF_ERROR_BAD_INPUT);
  EXPECT_NE(last_error().find("did you mean 'ocr'"), std::string::npos) << last_error();
  EXPECT_EQ(skiff_pipeline_load("ocr", "{not json", &p), SKIFF_ERROR_BAD_INPUT);
  EXPECT_EQ(skiff_pipeline_load("ocr", "{\"det_modle\": \"x\"}", &p), SKIFF_ERROR_BAD_INPUT);
  EXPECT_NE(last_error().find("did you mean 'det_model'"), std::string::npos) << last_error();
  EXPECT_EQ(skiff_set_num_threads(0), SKIFF_ERROR_BAD_INPUT);
  // A success clears the message.
  EXPECT_EQ(skiff_set_num_threads(2), SKIFF_OK);
  EXPECT_EQ(last_error(), "");
  skiff_model_free(nullptr);
  skiff_outputs_free(nullptr);
  skiff_pipeline_free(nullptr);
}

/// tests/framework/serve/affine_graph.h as an .onnx file.
std::string write_affine_model(const std::filesystem::path& dir) {
  const std::string path = (dir / "affine.onnx").string();
  skiff::graph::export_onnx(skiff::serve::testing::affine_graph(), path);
  return path;
}

TEST(CApi, ModelTensorsInAndOut) {
  skiff::testing::TempDir dir;
  skiff_model* model = nullptr;
  ASSERT_EQ(skiff_model_load(write_affine_model(dir.path).c_str(), &model), SKIFF_OK) << last_error();
  ASSERT_EQ(skiff_model_num_inputs(model), 1u);
  ASSERT_EQ(skiff_model_num_outputs(model), 1u);
  skiff_tensor info;
  ASSERT_EQ(skiff_model_input(model, 0, &info), SKIFF_OK);
  EXPECT_STREQ(info.name, "x");
  EXPECT_EQ(info.dtype, SKIFF_FLOAT32);
  ASSERT_EQ(info.rank, 2);
  EXPECT_EQ(info.shape[0], -1);  // dynamic
  EXPECT_EQ(info.shape[1], 3);
  EXPECT_EQ(skiff_model_input(model, 1, &info), SKIFF_ERROR_BAD_INPUT);

  const float x[] = {1, 2, 3, 0, 0, 0};
  const int64_t shape[] = {2, 3};
  for (const char* name : {static_cast<const char*>(nullptr), "x"}) {
    skiff_tensor input = {name, SKIFF_FLOAT32, 2, shape, x};
    skiff_outputs* out = nullptr;
    ASSERT_EQ(skiff_model_run(model, &input, 1, &out), SKIFF_OK) << last_error();
    ASSERT_EQ(skiff_outputs_count(out), 1u);
    skiff_tensor y;
    ASSERT_EQ(skiff_outputs_get(out, 0, &y), SKIFF_OK);
    EXPECT_STREQ(y.name, "y");
    ASSERT_EQ(y.rank, 2);
    EXPECT_EQ(y.shape[0], 2);
    EXPECT_EQ(y.shape[1], 2);
    const float* v = static_cast<const float*>(y.data);
    EXPECT_EQ((std::vector<float>(v, v + 4)), (std::vector<float>{14, 25, 10, 20}));
    EXPECT_EQ(skiff_outputs_get(out, 1, &y), SKIFF_ERROR_BAD_INPUT);
    skiff_outputs_free(out);
  }
  // Wrong shapes, names, dtypes and counts are bad input, named.
  skiff_outputs* out = nullptr;
  const int64_t wrong[] = {2, 4};
  skiff_tensor bad = {nullptr, SKIFF_FLOAT32, 2, wrong, x};
  EXPECT_EQ(skiff_model_run(model, &bad, 1, &out), SKIFF_ERROR_BAD_INPUT);
  EXPECT_NE(last_error().find("'x'"), std::string::npos) << last_error();
  bad = {"z", SKIFF_FLOAT32, 2, shape, x};
  EXPECT_EQ(skiff_model_run(model, &bad, 1, &out), SKIFF_ERROR_BAD_INPUT);
  EXPECT_NE(last_error().find("no input named 'z'"), std::string::npos) << last_error();
  bad = {nullptr, skiff_dtype(42), 2, shape, x};
  EXPECT_EQ(skiff_model_run(model, &bad, 1, &out), SKIFF_ERROR_BAD_INPUT);
  EXPECT_EQ(skiff_model_run(model, nullptr, 0, &out), SKIFF_ERROR_BAD_INPUT);
  EXPECT_NE(last_error().find("takes 1 inputs, got 0"), std::string::npos) << last_error();
  bad = {nullptr, SKIFF_FLOAT32, 2, shape, nullptr};
  EXPECT_EQ(skiff_model_run(model, &bad, 1, &out), SKIFF_ERROR_BAD_INPUT);
  EXPECT_EQ(out, nullptr);
  skiff_model_free(model);
}

TEST(CApi, PipelineWithoutAnImageFieldSaysSo) {
  skiff_pipeline* gen = nullptr;
  ASSERT_EQ(skiff_pipeline_load("nlp/generate", "{\"model\": \"" SKIFF_SOURCE_DIR "/tests/data/llama/tiny\"}", &gen),
            SKIFF_OK)
      << last_error();
  char* result = nullptr;
  const char bytes[] = "\x89PNG";
  EXPECT_EQ(skiff_pipeline_run_image(gen, bytes, 4, nullptr, &result), SKIFF_ERROR_BAD_INPUT);
  EXPECT_NE(last_error().find("takes no image"), std::string::npos) << last_error();
  ASSERT_EQ(skiff_pipeline_run(gen, "{\"prompt\": \"hello world\", \"maxNewTokens\": 3}", &result), SKIFF_OK)
      << last_error();
  EXPECT_NE(std::string(result).find("\"newTokens\":3"), std::string::npos) << result;
  skiff_string_free(result);
  EXPECT_EQ(skiff_pipeline_run(gen, "{\"prompt\": \"\"}", &result), SKIFF_ERROR_BAD_INPUT);
  EXPECT_EQ(result, nullptr);
  EXPECT_NE(last_error().find("prompt"), std::string::npos) << last_error();
  skiff_pipeline_free(gen);
}

}  // namespace
