// Tests of suites/detection/transforms.h and det_dataset.h: every transform moves
// boxes as computed by hand, random steps follow the seed, bad YAML names the key,
// and PaddleDetection's reader sections run on synthetic images.
#include "suites/detection/transforms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "framework/core/error.h"
#include "tests/temp_dir.h"
#include "suites/detection/det_dataset.h"
#include "suites/detection/synth.h"

namespace skiff::detection {
namespace {
namespace fs = std::filesystem;

using skiff::testing::TempDir;

DetPipeline pipeline(const std::string& yaml) { return DetPipeline(config::Section(YAML::Load(yaml), "TrainReader", "r.yml")); }

// A w x h image whose pixel (x, y) holds B = x, G = y (mod 256), R = 50, with boxes labelled 0, 1, ...
DetSample sample(int w, int h, std::vector<Box> boxes, std::vector<uint8_t> crowd = {}) {
  DetSample s;
  s.where = "test";
  s.image = cv::Mat(h, w, CV_8UC3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) s.image.at<cv::Vec3b>(y, x) = {uint8_t(x % 256), uint8_t(y % 256), 50};
  s.boxes = std::move(boxes);
  for (size_t i = 0; i < s.boxes.size(); ++i) s.labels.push_back(int(i));
  s.is_crowd = crowd.empty() ? std::vector<uint8_t>(s.boxes.size(), 0) : crowd;
  return s;
}

void expect_box(const Box& b, float x0, float y0, float x1, float y1) {
  EXPECT_FLOAT_EQ(b.x0, x0);
  EXPECT_FLOAT_EQ(b.y0, y0);
  EXPECT_FLOAT_EQ(b.x1, x1);
  EXPECT_FLOAT_EQ(b.y1, y1);
}

TEST(DetTransformsTest, FlipMirrorsBoxes) {
  auto p = pipeline("sample_transforms:\n- Decode: {}\n- RandomFlip: {prob: 1.0}\n");
  DetSample s = sample(100, 50, {{10, 5, 30, 20}, {0, 0, 100, 50}});
  Generator gen(1);
  p.run_sample(s, gen);
  expect_box(s.boxes[0], 70, 5, 90, 20);  // x0' = W - x1, x1' = W - x0
  expect_box(s.boxes[1], 0, 0, 100, 50);
  EXPECT_EQ(s.image.at<cv::Vec3b>(0, 0)[0], 99) << "the pixels flip too";
  auto never = pipeline("sample_transforms:\n- Decode: {}\n- RandomFlip: {prob: 0}\n");
  DetSample t = sample(100, 50, {{10, 5, 30, 20}});
  never.run_sample(t, gen);
  expect_box(t.boxes[0], 10, 5, 30, 20);
}

TEST(DetTransformsTest, ResizeScalesBoxesAndRecordsTheScale) {
  auto p = pipeline("sample_transforms:\n- Decode: {}\n- Resize: {target_size: [200, 300], keep_ratio: false, interp: 1}\n");
  DetSample s = sample(100, 50, {{10, 5, 20, 10}});
  Generator gen(1);
  p.run_sample(s, gen);
  EXPECT_EQ(s.image.cols, 300);
  EXPECT_EQ(s.image.rows, 200);
  expect_box(s.boxes[0], 30, 20, 60, 40);
  EXPECT_FLOAT_EQ(s.scale_y, 4);
  EXPECT_FLOAT_EQ(s.scale_x, 3);
  EXPECT_EQ(s.orig_h, 50);
  EXPECT_EQ(s.orig_w, 100);

  auto keep = pipeline("sample_transforms:\n- Decode: {}\n- Resize: {target_size: 320, keep_ratio: true}\n");
  DetSample t = sample(100, 50, {{10, 5, 20, 10}});
  keep.run_sample(t, gen);
  EXPECT_EQ(t.image.cols, 320);  // min(320 / 50, 320 / 100) = 3.2
  EXPECT_EQ(t.image.rows, 160);
  expect_box(t.boxes[0], 32, 16, 64, 32);
}

// The crop's offset is read back from the pixel values (B = x, G = y), so the
// expected boxes can be computed by hand: clipped to the crop, dropped when their
// centre falls outside it.
TEST(DetTransformsTest, RandomCropClipsAndDropsBoxes) {
  auto p = pipeline(
      "sample_transforms:\n- Decode: {}\n"
      "- RandomCrop: {scaling: [0.5, 0.5], aspect_ratio: [1, 1], thresholds: [0.0], allow_no_crop: false}\n");
  const std::vector<Box> boxes{{10, 10, 40, 30}, {60, 20, 140, 90}, {150, 5, 195, 40}, {0, 0, 200, 100}};
  int dropped = 0, clipped = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    DetSample s = sample(200, 100, boxes);
    Generator gen(seed);
    p.run_sample(s, gen);
    ASSERT_EQ(s.image.cols, 100);
    ASSERT_EQ(s.image.rows, 50);
    const float cx = s.image.at<cv::Vec3b>(0, 0)[0], cy = s.image.at<cv::Vec3b>(0, 0)[1];
    std::vector<Box> expected;
    std::vector<int> labels;
    for (size_t i = 0; i < boxes.size(); ++i) {
      const Box& b = boxes[i];
      const float mx = (b.x0 + b.x1) / 2, my = (b.y0 + b.y1) / 2;
      if (!(mx > cx && mx < cx + 100 && my > cy && my < cy + 50)) continue;
      Box c{std::max(b.x0, cx) - cx, std::max(b.y0, cy) - cy, std::min(b.x1, cx + 100) - cx, std::min(b.y1, cy + 50) - cy};
      if (c.x1 <= c.x0 || c.y1 <= c.y0) continue;
      clipped += c.x1 - c.x0 < b.x1 - b.x0;
      expected.push_back(c);
      labels.push_back(int(i));
    }
    dropped += int(boxes.size() - expected.size());
    ASSERT_EQ(s.boxes.size(), expected.size()) << "seed " << seed;
    EXPECT_EQ(s.labels, labels);
    for (size_t i = 0; i < expected.size(); ++i)
      expect_box(s.boxes[i], expected[i].x0, expected[i].y0, expected[i].x1, expected[i].y1);
  }
  EXPECT_GT(dropped, 0);
  EXPECT_GT(clipped, 0);
}

TEST(DetTransformsTest, RandomExpandShiftsBoxes) {
  auto p = pipeline("sample_transforms:\n- Decode: {}\n- RandomExpand: {ratio: 3, prob: 1}\n");
  DetSample s = sample(40, 30, {{10, 5, 20, 15}});
  Generator gen(5);
  p.run_sample(s, gen);
  ASSERT_GT(s.image.cols, 40);
  // Find where the original image went: its (0, 0) pixel is (0, 0, 50); the fill is (127, 127, 127).
  cv::Point at(-1, -1);
  for (int y = 0; y < s.image.rows && at.x < 0; ++y)
    for (int x = 0; x < s.image.cols; ++x)
      if (s.image.at<cv::Vec3b>(y, x) == cv::Vec3b(0, 0, 50)) {
        at = {x, y};
        break;
      }
  ASSERT_GE(at.x, 0);
  expect_box(s.boxes[0], 10.f + at.x, 5.f + at.y, 20.f + at.x, 15.f + at.y);
}

TEST(DetTransformsTest, RandomStepsFollowTheSeed) {
  const std::string yaml =
      "sample_transforms:\n- Decode: {}\n- RandomCrop: {}\n- RandomFlip: {}\n- RandomDistort: {}\n- RandomExpand: {}\n";
  auto p = pipeline(yaml);
  auto run = [&](uint64_t seed) {
    DetSample s = sample(120, 80, {{10, 10, 50, 40}, {60, 30, 110, 70}});
    Generator gen(seed);
    p.run_sample(s, gen);
    return s;
  };
  int differ = 0;
  for (uint64_t seed = 0; seed < 6; ++seed) {
    DetSample a = run(seed), b = run(seed), c = run(seed + 100);
    ASSERT_EQ(a.image.size(), b.image.size());
    EXPECT_EQ(cv::norm(a.image, b.image, cv::NORM_INF), 0);
    ASSERT_EQ(a.boxes.size(), b.boxes.size());
    for (size_t i = 0; i < a.boxes.size(); ++i) expect_box(a.boxes[i], b.boxes[i].x0, b.boxes[i].y0, b.boxes[i].x1, b.boxes[i].y1);
    differ += a.image.size() != c.image.size() || cv::norm(a.image, c.image, cv::NORM_INF) > 0;
  }
  EXPECT_GE(differ, 5);
}

TEST(DetTransformsTest, PadBatchKeepsBoxesAndPadGtMasks) {
  auto p = pipeline(
      "sample_transforms:\n- Decode: {}\n- NormalizeImage: {is_scale: true, mean: [0.485,0.456,0.406], std: [0.229, 0.224,0.225]}\n"
      "- Permute: {}\nbatch_transforms:\n- PadBatch: {pad_to_stride: 32}\n- PadGT: {}\n");
  std::vector<DetSample> batch{sample(100, 50, {{1, 2, 3, 4}, {5, 6, 7, 8}}, {0, 1}),
                               sample(60, 70, {{10, 11, 20, 21}, {0, 0, 5, 5}, {30, 30, 40, 40}})};
  batch[0].image.at<cv::Vec3b>(0, 0) = {0, 128, 255};  // B, G, R
  Generator gen(0);
  DetBatch b = p.run(std::move(batch), gen);
  EXPECT_EQ(b.images.shape(), (Shape{2, 3, 96, 128}));
  const float* img = b.images.data<float>();
  EXPECT_NEAR(img[0], (1.0 - 0.485) / 0.229, 1e-5) << "channel 0 is red";
  EXPECT_NEAR(img[96 * 128], (128 / 255.0 - 0.456) / 0.224, 1e-5);
  EXPECT_NEAR(img[2 * 96 * 128], (0 - 0.406) / 0.225, 1e-5);
  EXPECT_EQ(img[50 * 128 + 0], 0) << "padding below the first image";
  EXPECT_EQ(b.im_shape.data<float>()[0], 50);
  EXPECT_EQ(b.im_shape.data<float>()[3], 60);
  ASSERT_EQ(b.gt_boxes[0].size(), 1u) << "the crowd box is no target";
  expect_box(b.gt_boxes[0][0], 1, 2, 3, 4);
  ASSERT_EQ(b.crowd_boxes[0].size(), 1u);
  expect_box(b.gt_boxes[1][2], 30, 30, 40, 40);
  EXPECT_EQ(b.pad_gt_boxes.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(b.pad_gt_labels.shape(), (Shape{2, 3}));
  EXPECT_EQ(b.pad_gt_mask.shape(), (Shape{2, 3}));
  const float* mask = b.pad_gt_mask.data<float>();
  EXPECT_EQ(std::vector<float>(mask, mask + 6), (std::vector<float>{1, 0, 0, 1, 1, 1}));
  EXPECT_EQ(b.pad_gt_labels.data<int64_t>()[5], 2);
  EXPECT_EQ(b.pad_gt_boxes.data<float>()[4 * 4 + 0], 0);
  EXPECT_EQ(b.pad_gt_boxes.data<float>()[5 * 4 + 2], 40);
}

TEST(DetTransformsTest, BatchRandomResizeGivesTheWholeBatchOneSize) {
  auto p = pipeline(
      "sample_transforms:\n- Decode: {}\nbatch_transforms:\n"
      "- BatchRandomResize: {target_size: [256, 288, 320, 352], random_size: True, random_interp: True, keep_ratio: False}\n"
      "- Permute: {}\n");
  std::set<int64_t> sizes;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    Generator gen(seed);
    DetBatch b = p.run({sample(100, 50, {{10, 5, 20, 10}}), sample(64, 80, {{0, 0, 64, 80}})}, gen);
    const int64_t s = b.images.shape()[2];
    EXPECT_EQ(b.images.shape(), (Shape{2, 3, s, s}));
    sizes.insert(s);
    expect_box(b.gt_boxes[0][0], 10 * s / 100.f, 5 * s / 50.f, 20 * s / 100.f, 10 * s / 50.f);
    expect_box(b.gt_boxes[1][0], 0, 0, float(s), float(s));
  }
  EXPECT_GE(sizes.size(), 3u);
  for (int64_t s : sizes) EXPECT_TRUE(s == 256 || s == 288 || s == 320 || s == 352) << s;
}

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "(no ValueError)";
}

TEST(DetTransformsTest, BadYamlNamesFileLineAndKey) {
  auto msg = error_of([] { pipeline("sample_transforms:\n- Decode: {}\n- RandomFlp: {prob: 0.5}\n"); });
  EXPECT_NE(msg.find("r.yml:3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'RandomFlip'"), std::string::npos) << msg;
  msg = error_of([] { pipeline("sample_transforms:\n- Decode: {}\n- RandomFlip: {prob: 2}\n"); });
  EXPECT_NE(msg.find("r.yml:3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("RandomFlip.prob"), std::string::npos) << msg;
  msg = error_of([] { pipeline("sample_transforms:\n- Decode: {}\n- Resize: {target_size: [320, 320], keep_ratoi: false}\n"); });
  EXPECT_NE(msg.find("Resize.keep_ratoi"), std::string::npos) << msg;
  msg = error_of([] { pipeline("sample_transforms:\n- Decode: {}\n- Resize: {target_size: [320, -1]}\n"); });
  EXPECT_NE(msg.find("Resize.target_size"), std::string::npos) << msg;
  msg = error_of([] { pipeline("sample_transforms:\n- NormalizeImage: {}\n- Decode: {}\n"); });
  EXPECT_NE(msg.find("put Decode first"), std::string::npos) << msg;
  msg = error_of([] { pipeline("sample_transforms:\n- Decode: {}\n- PadBatch: {pad_to_stride: 32}\n"); });
  EXPECT_NE(msg.find("batch_transforms"), std::string::npos) << msg;
  msg = error_of([] { pipeline("sample_transforms:\n- Decode: {}\nbatch_transforms:\n- PadBatch: {pad_to_stride: 32}\n"); });
  EXPECT_NE(msg.find("put Permute before it"), std::string::npos) << msg;
  msg = error_of([] { pipeline("sample_transforms:\n- Decode: {}\nbatch_size: 0\n"); });
  EXPECT_NE(msg.find("r.yml:3: TrainReader.batch_size"), std::string::npos) << msg;
  msg = error_of([] { pipeline("sample_transforms:\n- Decode: {}\nbatch_sise: 8\n"); });
  EXPECT_NE(msg.find("batch_sise"), std::string::npos) << msg;
  msg = error_of([] { pipeline("sample_transforms:\n- Decode: {}\n- RandomDistort: {hue: [18, -18, 0.5]}\n"); });
  EXPECT_NE(msg.find("RandomDistort.hue"), std::string::npos) << msg;
}

TEST(DetTransformsTest, CollateWithoutPermuteOrPaddingIsAnError) {
  std::vector<DetSample> b{sample(10, 10, {})};
  EXPECT_NE(error_of([&] { collate_det_batch(b, {}); }).find("Permute"), std::string::npos);
  std::vector<DetSample> two{sample(10, 10, {}), sample(12, 10, {})};
  for (auto& s : two) s.chw = true;
  EXPECT_NE(error_of([&] { collate_det_batch(two, {}); }).find("PadBatch"), std::string::npos);
}

// ---- the COCO training dataset -----------------------------------------------------------------

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

TEST(CocoDetDatasetTest, LabelsAreContiguousCrowdFlaggedEmptySkipped) {
  TempDir dir;
  fs::create_directories(dir.path / "img");
  for (const char* f : {"a.jpg", "b.jpg", "c.jpg"}) write(dir.path / "img" / f, "x");
  write(dir.path / "gt.json", R"({
    "images": [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 80},
               {"id": 2, "file_name": "b.jpg", "width": 100, "height": 80},
               {"id": 3, "file_name": "c.jpg", "width": 100, "height": 80}],
    "categories": [{"id": 9, "name": "nine"}, {"id": 2, "name": "two"}],
    "annotations": [{"id": 1, "image_id": 1, "category_id": 9, "bbox": [10, 20, 30, 40]},
                    {"id": 2, "image_id": 1, "category_id": 2, "bbox": [90, 70, 30, 30], "iscrowd": 1},
                    {"id": 3, "image_id": 2, "category_id": 2, "bbox": [0, 0, 5, 5], "iscrowd": 1}]})");
  CocoDetDataset ds({.dataset_dir = dir.path.string(), .image_dir = "img", .anno_path = "gt.json"});
  ASSERT_EQ(ds.size(), 1) << "image 2 has only a crowd box, image 3 none";
  EXPECT_EQ(ds.skipped_empty(), 2);
  EXPECT_EQ(ds.category_ids(), (std::vector<int64_t>{2, 9}));
  EXPECT_EQ(ds.class_names(), (std::vector<std::string>{"two", "nine"}));
  const DetSample& s = ds.record(0);
  EXPECT_EQ(s.image_id, 1);
  EXPECT_EQ(s.labels, (std::vector<int>{1, 0}));
  EXPECT_EQ(s.is_crowd, (std::vector<uint8_t>{0, 1}));
  expect_box(s.boxes[0], 10, 20, 40, 60);
  expect_box(s.boxes[1], 90, 70, 100, 80);  // clipped to the image
  EXPECT_EQ(fs::path(s.path).filename(), "a.jpg");

  CocoDetDataset all(config::Section(YAML::Load(fmt::format(
                                         "name: COCODataSet\ndataset_dir: {}\nimage_dir: img\nanno_path: gt.json\n"
                                         "data_fields: ['image', 'gt_bbox', 'gt_class', 'is_crowd']\nallow_empty: true\n",
                                         dir.path.string())),
                                     "TrainDataset", "r.yml"));
  EXPECT_EQ(all.size(), 3);

  fs::remove(dir.path / "img/a.jpg");
  try {
    CocoDetDataset missing({.dataset_dir = dir.path.string(), .image_dir = "img", .anno_path = "gt.json"});
    FAIL() << "no error for a missing image";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("a.jpg"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gt.json"), std::string::npos) << e.what();
  }
  auto msg = error_of([&] {
    CocoDetDataset(config::Section(YAML::Load("anno_path: gt.json\nimage_dri: img\n"), "TrainDataset", "r.yml"));
  });
  EXPECT_NE(msg.find("r.yml:2: TrainDataset.image_dri"), std::string::npos) << msg;
}

// The readers of the task, as PaddleDetection writes them, over a synthetic set.
TEST(CocoDetDatasetTest, PaddleDetectionReadersRunOnSyntheticImages) {
  TempDir dir;
  write_synth_detection_dataset(dir.path.string(), 6, 1);
  auto ds = std::make_shared<const CocoDetDataset>(config::Section(
      YAML::Load(fmt::format("dataset_dir: {}\nimage_dir: images\nanno_path: annotations.json\n", dir.path.string())),
      "TrainDataset", "r.yml"));
  EXPECT_EQ(ds->num_classes(), 10);
  const YAML::Node train = YAML::Load(R"(
sample_transforms:
- Decode: {}
- RandomCrop: {}
- RandomFlip: {prob: 0.5}
- RandomDistort: {}
batch_transforms:
- BatchRandomResize: {target_size: [256, 288, 320, 352], random_size: True, random_interp: True, keep_ratio: False}
- NormalizeImage: {is_scale: true, mean: [0.485,0.456,0.406], std: [0.229, 0.224,0.225]}
- Permute: {}
- PadGT: {}
batch_size: 4
shuffle: true
drop_last: true
)");
  config::Section section(train, "TrainReader", "r.yml");
  DetLoader loader(ds, std::make_shared<const DetPipeline>(section), read_det_reader_settings(section), 3);
  EXPECT_EQ(loader.num_batches(), 1);
  DetBatch b = loader.batch(0, 0);
  const int64_t s = b.images.shape()[2];
  EXPECT_EQ(b.images.shape(), (Shape{4, 3, s, s}));
  EXPECT_TRUE(s == 256 || s == 288 || s == 320 || s == 352);
  ASSERT_TRUE(b.pad_gt_mask.defined());
  const int64_t m = b.pad_gt_boxes.shape()[1];
  EXPECT_EQ(b.pad_gt_boxes.shape(), (Shape{4, m, 4}));
  EXPECT_EQ(b.pad_gt_labels.shape(), (Shape{4, m}));
  size_t most = 0;
  for (const auto& g : b.gt_boxes) most = std::max(most, g.size());
  EXPECT_EQ(m, int64_t(std::max<size_t>(1, most)));
  for (size_t i = 0; i < b.gt_boxes.size(); ++i)
    for (const Box& box : b.gt_boxes[i]) {
      EXPECT_GE(box.x0, 0);
      EXPECT_LE(box.x1, float(s));
      EXPECT_LT(box.x0, box.x1);
    }
  // The same batch again: same pixels.
  DetBatch again = loader.batch(0, 0);
  EXPECT_EQ(again.image_ids, b.image_ids);
  EXPECT_EQ(std::vector<float>(again.images.data<float>(), again.images.data<float>() + 1000),
            std::vector<float>(b.images.data<float>(), b.images.data<float>() + 1000));

  const YAML::Node eval = YAML::Load(R"(
sample_transforms:
- Decode: {}
- Resize: {interp: 2, target_size: [320, 320], keep_ratio: False}
- NormalizeImage: {is_scale: true, mean: [0.485,0.456,0.406], std: [0.229, 0.224,0.225]}
- Permute: {}
batch_transforms:
- PadBatch: {pad_to_stride: 32}
batch_size: 8
)");
  config::Section esec(eval, "EvalReader", "r.yml");
  DetLoader eval_loader(ds, std::make_shared<const DetPipeline>(esec), read_det_reader_settings(esec), 0);
  DetBatch e = eval_loader.batch(0, 0);
  EXPECT_EQ(e.images.shape(), (Shape{6, 3, 320, 320}));
  EXPECT_EQ(e.scale_factor.data<float>()[0], 1.0f) << "synthetic images are 320 x 320";
  EXPECT_EQ(e.orig_size.data<float>()[1], 320.0f);
  EXPECT_FALSE(e.pad_gt_mask.defined());
  EXPECT_EQ(e.image_ids, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace skiff::detection
