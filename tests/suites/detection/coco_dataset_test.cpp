// Tests of suites/detection/coco_dataset.h: reading COCO ground truth, the
// errors that name the file and element, and results files written atomically.
#include "suites/detection/coco_dataset.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "framework/core/error.h"
#include "framework/io/file.h"

namespace skiff::detection {
namespace {
namespace fs = std::filesystem;

struct TempDir {
  TempDir() {
    path = fs::temp_directory_path() / ("skiff_coco_dataset_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path write(const std::string& name, const std::string& content) const {
    const fs::path p = path / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  fs::path path;
  static inline int n = 0;
};

const char* kValid = R"({
  "info": {"year": 2017}, "licenses": [],
  "images": [{"id": 7, "file_name": "a.jpg", "width": 640, "height": 480}, {"id": 3}],
  "categories": [{"id": 1, "name": "person", "supercategory": "human"}, {"id": 18, "name": "dog"}],
  "annotations": [
    {"id": 1, "image_id": 7, "category_id": 1, "bbox": [10, 20.5, 30, 40], "area": 900.25, "iscrowd": 0,
     "segmentation": [[10, 20, 40, 20, 40, 60]]},
    {"id": 2, "image_id": 3, "category_id": 18, "bbox": [0, 0, 5, 4]},
    {"id": 5, "image_id": 3, "category_id": 1, "bbox": [1, 2, 3, 4], "area": 0, "iscrowd": true,
     "segmentation": {"counts": [1, 2], "size": [4, 4]}}
  ]
})";

// kValid with one annotation replaced.
std::string with_annotation(const std::string& ann) {
  return R"({"images": [{"id": 1}, {"id": 2}], "categories": [{"id": 1, "name": "a"}],
    "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]}, )" +
         ann + "]}";
}

// The message of the ValueError parse_coco_dataset throws, or "" when it does not throw.
std::string dataset_error(const std::string& text) {
  try {
    parse_coco_dataset(text, "gt.json");
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

TEST(CocoDatasetTest, ReadsImagesCategoriesAndAnnotations) {
  TempDir dir;
  const CocoDataset ds = load_coco_dataset(dir.write("gt.json", kValid));
  ASSERT_EQ(ds.images.size(), 2u);
  EXPECT_EQ(ds.images[0].id, 7);
  EXPECT_EQ(ds.images[0].file_name, "a.jpg");
  EXPECT_EQ(ds.images[0].width, 640);
  EXPECT_EQ(ds.images[0].height, 480);
  EXPECT_EQ(ds.images[1].id, 3);
  EXPECT_EQ(ds.images[1].file_name, "");
  ASSERT_EQ(ds.categories.size(), 2u);
  EXPECT_EQ(ds.categories[0].name, "person");
  EXPECT_EQ(ds.categories[0].supercategory, "human");
  EXPECT_EQ(ds.categories[1].id, 18);
  EXPECT_EQ(ds.categories[1].supercategory, "");
  ASSERT_EQ(ds.annotations.size(), 3u);
  const CocoAnnotation& a = ds.annotations[0];
  EXPECT_EQ(a.id, 1);
  EXPECT_EQ(a.image_id, 7);
  EXPECT_EQ(a.category_id, 1);
  EXPECT_EQ(a.bbox, (BoxXywh{10, 20.5, 30, 40}));
  EXPECT_EQ(a.area, 900.25);  // the file's area, not w * h
  EXPECT_FALSE(a.iscrowd);
  EXPECT_EQ(ds.annotations[1].area, 20.0);  // none given: w * h
  EXPECT_FALSE(ds.annotations[1].iscrowd);
  EXPECT_EQ(ds.annotations[2].area, 0.0);
  EXPECT_TRUE(ds.annotations[2].iscrowd);
  EXPECT_EQ(ds.image_index(3), 1);
  EXPECT_EQ(ds.image_index(4), -1);
  EXPECT_EQ(ds.category_index(18), 1);
  EXPECT_EQ(ds.category_index(2), -1);
}

TEST(CocoDatasetTest, EmptyListsAreValid) {
  const CocoDataset ds = parse_coco_dataset(R"({"images": [], "annotations": [], "categories": []})", "x");
  EXPECT_TRUE(ds.images.empty());
  EXPECT_TRUE(ds.annotations.empty());
  EXPECT_TRUE(ds.categories.empty());
}

TEST(CocoDatasetTest, ErrorsNameTheFileAndTheElement) {
  EXPECT_EQ(dataset_error(with_annotation(R"({"id": 2, "image_id": 1, "category_id": 1, "bbox": [0, 0, 0, 3]})")),
            "gt.json: annotations[1].bbox: width must be > 0, got 0");
  EXPECT_EQ(dataset_error(with_annotation(R"({"id": 2, "image_id": 1, "category_id": 1, "bbox": [0, 0, 3, -1]})")),
            "gt.json: annotations[1].bbox: height must be > 0, got -1");
  EXPECT_EQ(dataset_error(with_annotation(R"({"id": 2, "image_id": 1, "category_id": 1, "bbox": [0, 0, 3]})")),
            "gt.json: annotations[1].bbox: expected [x, y, width, height], got [0,0,3]");
  EXPECT_EQ(dataset_error(with_annotation(R"({"id": 2, "image_id": 1, "category_id": 1, "bbox": [0, "a", 3, 1]})")),
            "gt.json: annotations[1].bbox: expected a number, got \"a\"");
  EXPECT_EQ(dataset_error(with_annotation(R"({"id": 2, "image_id": 9, "category_id": 1, "bbox": [0, 0, 1, 1]})")),
            "gt.json: annotations[1].image_id: unknown image id 9");
  EXPECT_EQ(dataset_error(with_annotation(R"({"id": 2, "image_id": 2, "category_id": 4, "bbox": [0, 0, 1, 1]})")),
            "gt.json: annotations[1].category_id: unknown category id 4");
  EXPECT_EQ(dataset_error(with_annotation(R"({"id": 1, "image_id": 2, "category_id": 1, "bbox": [0, 0, 1, 1]})")),
            "gt.json: annotations[1].id: duplicate annotation id 1");
  EXPECT_EQ(dataset_error(with_annotation(R"({"id": 2, "image_id": 2, "category_id": 1})")),
            "gt.json: annotations[1]: missing \"bbox\"");
  EXPECT_EQ(dataset_error(with_annotation(R"({"id": 2.5, "image_id": 2, "category_id": 1, "bbox": [0, 0, 1, 1]})")),
            "gt.json: annotations[1].id: expected an integer, got 2.5");
  EXPECT_EQ(dataset_error(with_annotation(
                R"({"id": 2, "image_id": 2, "category_id": 1, "bbox": [0, 0, 1, 1], "iscrowd": 2})")),
            "gt.json: annotations[1].iscrowd: expected 0 or 1, got 2");
  EXPECT_EQ(dataset_error(with_annotation(
                R"({"id": 2, "image_id": 2, "category_id": 1, "bbox": [0, 0, 1, 1], "area": -4})")),
            "gt.json: annotations[1].area: must be >= 0, got -4");
  EXPECT_EQ(dataset_error(with_annotation("7")), "gt.json: annotations[1]: expected an object, got number");
  EXPECT_EQ(dataset_error(R"({"images": [{"id": 1}, {"id": 1}], "annotations": [], "categories": []})"),
            "gt.json: images[1].id: duplicate image id 1");
  EXPECT_EQ(dataset_error(R"({"images": [], "annotations": [], "categories": [{"id": 1, "name": "a"},
            {"id": 1, "name": "b"}]})"),
            "gt.json: categories[1].id: duplicate category id 1");
  EXPECT_EQ(dataset_error(R"({"images": [], "annotations": [], "categories": [{"id": 1}]})"),
            "gt.json: categories[0]: missing \"name\"");
  EXPECT_EQ(dataset_error(R"({"images": [], "categories": []})"), "gt.json: top level: missing \"annotations\"");
  EXPECT_EQ(dataset_error(R"({"images": {}, "annotations": [], "categories": []})"),
            "gt.json: images: expected an array, got object");
  EXPECT_EQ(dataset_error(R"([1, 2])"), "gt.json: top level: expected an object, got array");
  EXPECT_EQ(dataset_error(R"({"images": [)"), "gt.json: not valid JSON");
}

TEST(CocoDatasetTest, MissingFileIsAnIoError) {
  TempDir dir;
  EXPECT_THROW(load_coco_dataset(dir.path / "absent.json"), IoError);
}

TEST(CocoDatasetTest, HandBuiltDatasetRejectsDuplicateIds) {
  CocoDataset ds;
  ds.images = {{1, "", 0, 0}, {1, "", 0, 0}};
  EXPECT_THROW(ds.build_index(), ValueError);
}

TEST(CocoResultsTest, WritesAtomicallyAndReadsBack) {
  TempDir dir;
  const CocoDataset gt = parse_coco_dataset(kValid, "gt.json");
  const std::vector<Detection> dets = {{7, 1, {10.5, 20.25, 30, 40.125}, 0.987654321},
                                       {3, 18, {0, 0, 0, 0}, 0.1},
                                       {3, 1, {1e-3, 2, 3, 4}, 1.0}};
  const fs::path path = dir.path / "results.json";
  write_coco_results(path, dets);
  for (const auto& entry : fs::directory_iterator(dir.path))
    EXPECT_FALSE(io::is_atomic_temp_name(entry.path().filename().string())) << entry.path();
  const std::vector<Detection> back = load_coco_results(path, gt);
  ASSERT_EQ(back.size(), dets.size());
  for (size_t i = 0; i < dets.size(); ++i) {
    EXPECT_EQ(back[i].image_id, dets[i].image_id);
    EXPECT_EQ(back[i].category_id, dets[i].category_id);
    EXPECT_EQ(back[i].bbox, dets[i].bbox);  // shortest round-trip numbers: exact
    EXPECT_EQ(back[i].score, dets[i].score);
  }
  EXPECT_EQ((coco_results_json({{7, 1, {1, 2, 3, 4}, 0.5}})),
            "[{\"bbox\":[1.0,2.0,3.0,4.0],\"category_id\":1,\"image_id\":7,\"score\":0.5}]\n");
  EXPECT_EQ(coco_results_json({}), "[]\n");
}

TEST(CocoResultsTest, ErrorsNameTheFileAndTheElement) {
  const CocoDataset gt = parse_coco_dataset(kValid, "gt.json");
  auto error = [&](const std::string& text) -> std::string {
    try {
      parse_coco_results(text, "res.json", gt);
    } catch (const ValueError& e) {
      return e.what();
    }
    return "";
  };
  const std::string ok = R"({"image_id": 7, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5})";
  EXPECT_EQ(error("[" + ok + "]"), "");
  EXPECT_EQ(error("[" + ok + R"(, {"image_id": 8, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5}])"),
            "res.json: [1].image_id: image id 8 is not in the ground truth");
  EXPECT_EQ(error("[" + ok + R"(, {"image_id": 7, "category_id": 2, "bbox": [0, 0, 1, 1], "score": 0.5}])"),
            "res.json: [1].category_id: category id 2 is not in the ground truth");
  EXPECT_EQ(error("[" + ok + R"(, {"image_id": 7, "category_id": 1, "bbox": [0, 0, 1, -1], "score": 0.5}])"),
            "res.json: [1].bbox: height must be >= 0, got -1");
  EXPECT_EQ(error("[" + ok + R"(, {"image_id": 7, "category_id": 1, "bbox": [0, 0, 1, 1]}])"),
            "res.json: [1]: missing \"score\"");
  EXPECT_EQ(error(ok), "res.json: top level: expected an array of detections, got object");
  EXPECT_THROW((coco_results_json({{7, 1, {0, 0, 1, 1}, std::nan("")}})), ValueError);
}

}  // namespace
}  // namespace skiff::detection
