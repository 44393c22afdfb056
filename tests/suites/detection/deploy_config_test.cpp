// skiff det --model_dir: reading an exported detector's inference.yml (both
// PaddleDetection's `- type: Resize` layout and the reader's `- Resize: {}` one),
// and errors naming the file, line and key.
#include "suites/detection/deploy_config.h"

#include <gtest/gtest.h>

#include "framework/core/error.h"
#include "framework/io/file.h"
#include "tests/temp_dir.h"

namespace skiff::detection {
namespace {

namespace fs = std::filesystem;

fs::path model_dir(const skiff::testing::TempDir& tmp, const std::string& yml) {
  io::write_file_atomic(tmp.path / "inference.onnx", "not read by the config reader");
  io::write_file_atomic(tmp.path / "inference.yml", yml);
  return tmp.path;
}

TEST(DeployConfig, ReadsPaddleDetectionsLayout) {
  skiff::testing::TempDir tmp;
  DetectorConfig c = read_deploy_config(model_dir(tmp, R"(mode: paddle
arch: PicoDet
draw_threshold: 0.4
reg_max: 7
Preprocess:
- type: Resize
  interp: 2
  keep_ratio: false
  target_size: [320, 320]
- type: NormalizeImage
  is_scale: true
  mean: [0.485, 0.456, 0.406]
  std: [0.229, 0.224, 0.225]
- type: Permute
label_list: [circle, square, star]
)"));
  EXPECT_EQ(c.model, (tmp.path / "inference.onnx").string());
  EXPECT_EQ(c.labels, (std::vector<std::string>{"circle", "square", "star"}));
  EXPECT_FLOAT_EQ(c.score_threshold, 0.4f);
  EXPECT_EQ(c.reg_max, 7);
  EXPECT_TRUE(c.rgb);
  EXPECT_FALSE(c.keep_ratio);
  EXPECT_EQ(c.interpolation, 2);
  // is_scale: the statistics apply to 0..1 pixels, the Detector's are on 0..255.
  EXPECT_NEAR(c.mean[0], 0.485f * 255, 1e-3);
  EXPECT_NEAR(c.mean[2], 0.406f * 255, 1e-3);
  EXPECT_NEAR(c.std[1], 0.224f * 255, 1e-3);
}

TEST(DeployConfig, ReadsTheReaderLayoutAndDefaults) {
  skiff::testing::TempDir tmp;
  DetectorConfig c = read_deploy_config(model_dir(tmp, R"(Preprocess:
- Decode: {}
- Resize: {target_size: [416, 416], keep_ratio: true}
- NormalizeImage: {is_scale: false, mean: [123.675, 116.28, 103.53], std: [58.395, 57.12, 57.375]}
- Permute: {}
label_list: [a]
)"));
  EXPECT_TRUE(c.keep_ratio);
  EXPECT_FALSE(c.centre);  // PaddleDetection pads after the image, it does not centre it
  EXPECT_FLOAT_EQ(c.mean[0], 123.675f);
  EXPECT_FLOAT_EQ(c.std[2], 57.375f);
  EXPECT_FLOAT_EQ(c.score_threshold, 0.5f);
  EXPECT_EQ(c.reg_max, 7);
}

TEST(DeployConfig, ErrorsNameTheFileLineAndKey) {
  skiff::testing::TempDir tmp;
  auto message = [&](const std::string& yml) {
    try {
      read_deploy_config(model_dir(tmp, yml));
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  {
    const std::string m = message("Preprocess:\n- type: Mosaic\nlabel_list: [a]\n");
    EXPECT_NE(m.find("inference.yml:1"), std::string::npos) << m;
    EXPECT_NE(m.find("Mosaic"), std::string::npos) << m;
  }
  {
    const std::string m = message("Preprocess:\n- NormalizeImage: {mean: [1, 2], std: [1, 1, 1]}\nlabel_list: [a]\n");
    EXPECT_NE(m.find("inference.yml:2"), std::string::npos) << m;
    EXPECT_NE(m.find("mean"), std::string::npos) << m;
  }
  {
    const std::string m = message("Preprocess: []\nlabel_list: []\n");
    EXPECT_NE(m.find("label_list"), std::string::npos) << m;
  }
  {
    const std::string m = message("Preprocess: []\nlabel_list: [a]\ndraw_threshold: 3\n");
    EXPECT_NE(m.find("inference.yml:3"), std::string::npos) << m;
  }
}

TEST(DeployConfig, MissingFilesAreNamed) {
  skiff::testing::TempDir tmp;
  try {
    read_deploy_config(tmp.path);
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("inference.onnx"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace skiff::detection
