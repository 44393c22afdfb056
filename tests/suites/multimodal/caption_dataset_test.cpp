// Caption files in both layouts, their errors, and images as normalised tensors.
#include <gtest/gtest.h>

#include <filesystem>

#include "framework/core/error.h"
#include "framework/data/image_io.h"
#include "framework/io/file.h"
#include "suites/multimodal/caption_dataset.h"
#include "tests/temp_dir.h"

namespace skiff::multimodal {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  io::write_file_atomic(p, text);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CaptionFiles, CocoCaptionsAndTabLists) {
  skiff::testing::TempDir tmp;
  write(tmp.path / "coco.json",
        R"({"images": [{"id": 7, "file_name": "a.png", "label": "red star"}, {"id": 3, "file_name": "b.png"}],
            "annotations": [{"id": 0, "image_id": 3, "caption": "two cats"}, {"id": 1, "image_id": 7, "caption": "a red star"},
                            {"id": 2, "image_id": 7, "caption": "one red star"}]})");
  fs::create_directories(tmp.path / "images");
  auto coco = read_caption_file(tmp.path / "coco.json");
  ASSERT_EQ(coco.size(), 2u);
  EXPECT_EQ(coco[0].file, tmp.path / "images" / "a.png");  // <json dir>/images when it exists
  EXPECT_EQ(coco[0].captions, (std::vector<std::string>{"a red star", "one red star"}));
  EXPECT_EQ(coco[0].label, "red star");
  EXPECT_EQ(coco[1].captions, (std::vector<std::string>{"two cats"}));
  EXPECT_EQ(read_caption_file(tmp.path / "coco.json", "/imgs")[1].file, fs::path("/imgs/b.png"));

  write(tmp.path / "list.tsv", "# image<TAB>caption\nx/1.png\tfirst\n\nx/2.png\tsecond\r\nx/1.png\tagain\n");
  auto list = read_caption_file(tmp.path / "list.tsv");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].file, tmp.path / "x" / "1.png");
  EXPECT_EQ(list[0].captions, (std::vector<std::string>{"first", "again"}));
  EXPECT_EQ(list[1].captions, (std::vector<std::string>{"second"}));
}

TEST(CaptionFiles, ErrorsNameTheFileAndTheEntry) {
  skiff::testing::TempDir tmp;
  write(tmp.path / "bad.tsv", "a.png\tok\nno tab here\n");
  EXPECT_NE(error_of([&] { read_caption_file(tmp.path / "bad.tsv"); }).find("bad.tsv: line 2"), std::string::npos);
  write(tmp.path / "orphan.json", R"({"images": [{"id": 1, "file_name": "a.png"}], "annotations": [{"image_id": 2, "caption": "x"}]})");
  EXPECT_NE(error_of([&] { read_caption_file(tmp.path / "orphan.json"); }).find("annotations[0]: image_id 2"),
            std::string::npos);
  write(tmp.path / "silent.json", R"({"images": [{"id": 1, "file_name": "a.png"}], "annotations": []})");
  EXPECT_NE(error_of([&] { read_caption_file(tmp.path / "silent.json"); }).find("has no caption"), std::string::npos);
  write(tmp.path / "twice.json",
        R"({"images": [{"id": 1, "file_name": "a.png"}, {"id": 1, "file_name": "b.png"}], "annotations": []})");
  EXPECT_NE(error_of([&] { read_caption_file(tmp.path / "twice.json"); }).find("images[1]: id 1 appears twice"),
            std::string::npos);
  write(tmp.path / "notjson.json", "{");
  EXPECT_THROW(read_caption_file(tmp.path / "notjson.json"), ValueError);
  EXPECT_THROW(read_caption_file(tmp.path / "missing.json"), IoError);
}

TEST(CaptionFiles, ImagesBecomeNormalisedRgbPlanes) {
  skiff::testing::TempDir tmp;
  cv::Mat img(4, 6, CV_8UC3, cv::Scalar(255, 0, 128));  // BGR: blue 255, green 0, red 128
  const auto png = data::encode_image(img, ".png");
  io::write_file_atomic(tmp.path / "a.png", std::string_view(reinterpret_cast<const char*>(png.data()), png.size()));
  const Tensor t = load_images({{tmp.path / "a.png", {"x"}, ""}}, 8);
  ASSERT_EQ(t.shape(), (Shape{1, 3, 8, 8}));
  const auto v = t.to_vector<float>();
  EXPECT_NEAR(v[0], (128 / 255.f - 0.5f) / 0.25f, 1e-5);  // R plane first
  EXPECT_NEAR(v[64], -2.0f, 1e-5);                        // G = 0
  EXPECT_NEAR(v[128], 2.0f, 1e-5);                        // B = 255
  EXPECT_THROW(load_images({{tmp.path / "none.png", {"x"}, ""}}, 8), IoError);
}

}  // namespace
}  // namespace skiff::multimodal
