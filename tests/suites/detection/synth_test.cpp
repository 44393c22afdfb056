// Tests of suites/detection/synth.h: the written set is valid COCO, boxes are the
// extent of the pixels actually drawn, the occlusion rule holds, and the same seed
// gives the same bytes.
#include "suites/detection/synth.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"
#include "tests/temp_dir.h"
#include "framework/io/file.h"
#include "suites/detection/coco_dataset.h"

namespace skiff::detection {
namespace {
namespace fs = std::filesystem;

using skiff::testing::TempDir;

SynthDetOptions small_options() {
  SynthDetOptions o;
  o.width = o.height = 160;
  return o;
}

TEST(DetSynthTest, WrittenSetLoadsAsCocoWithEveryClass) {
  TempDir dir;
  SynthDetSummary sum = write_synth_detection_dataset(dir.path.string(), 50, 7, small_options());
  CocoDataset coco = load_coco_dataset(dir.path / "annotations.json");
  ASSERT_EQ(coco.images.size(), 50u);
  EXPECT_EQ(sum.images, 50);
  EXPECT_EQ(int64_t(coco.annotations.size()), sum.annotations);
  ASSERT_GE(coco.categories.size(), 8u);
  for (size_t c = 0; c < coco.categories.size(); ++c) {
    EXPECT_EQ(coco.categories[c].id, int64_t(c) + 1);
    EXPECT_EQ(coco.categories[c].name, synth_class_names()[c]);
  }
  std::set<int64_t> used;
  std::map<int64_t, int> per_image;
  for (const auto& a : coco.annotations) {
    used.insert(a.category_id);
    ++per_image[a.image_id];
    const CocoImage& im = coco.images[size_t(coco.image_index(a.image_id))];
    EXPECT_GE(a.bbox[0], 0);
    EXPECT_GE(a.bbox[1], 0);
    EXPECT_LE(a.bbox[0] + a.bbox[2], im.width);
    EXPECT_LE(a.bbox[1] + a.bbox[3], im.height);
    EXPECT_GT(a.area, 0);
    EXPECT_LE(a.area, a.bbox[2] * a.bbox[3]);
    EXPECT_FALSE(a.iscrowd);
  }
  EXPECT_EQ(used.size(), coco.categories.size()) << "every class appears in 50 images";
  for (const auto& im : coco.images) {
    EXPECT_EQ(im.width, 160);
    EXPECT_EQ(im.height, 160);
    EXPECT_TRUE(fs::is_regular_file(dir.path / "images" / im.file_name)) << im.file_name;
    EXPECT_GE(per_image[im.id], 1) << "every image has an object";
    EXPECT_LE(per_image[im.id], 6);
  }
  EXPECT_EQ(coco.images[0].file_name, "000000.jpg");
}

// The most frequent colour of a flat-background image.
cv::Vec3b background_of(const cv::Mat& img) {
  std::map<int, int> count;
  for (int y = 0; y < img.rows; ++y)
    for (int x = 0; x < img.cols; ++x) {
      auto p = img.at<cv::Vec3b>(y, x);
      ++count[p[0] << 16 | p[1] << 8 | p[2]];
    }
  int best = std::max_element(count.begin(), count.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
  return {uint8_t(best >> 16), uint8_t(best >> 8 & 255), uint8_t(best & 255)};
}

// Unoccluded objects on a flat background without clutter or noise: the pixels that
// differ from the background are exactly the objects' pixels, inside their boxes,
// and each box's four edges touch them.
TEST(DetSynthTest, BoxesAreTheExtentOfTheDrawnPixels) {
  SynthDetOptions o = small_options();
  o.flat_background = true, o.clutter = false, o.noise = false, o.occlusion = false;
  int objects = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    SynthDetImage s = render_synth_detection(o, seed);
    const cv::Vec3b bg = background_of(s.image);
    cv::Mat differs(s.image.rows, s.image.cols, CV_8U, cv::Scalar(0));
    for (int y = 0; y < s.image.rows; ++y)
      for (int x = 0; x < s.image.cols; ++x) differs.at<uint8_t>(y, x) = s.image.at<cv::Vec3b>(y, x) != bg;
    int64_t in_boxes = 0;
    for (const auto& obj : s.objects) {
      ++objects;
      const int x0 = int(obj.box.x0), y0 = int(obj.box.y0), x1 = int(obj.box.x1), y1 = int(obj.box.y1);
      ASSERT_EQ(float(x0), obj.box.x0);
      ASSERT_LT(x0, x1);
      ASSERT_LT(y0, y1);
      const cv::Mat in = differs(cv::Rect(x0, y0, x1 - x0, y1 - y0));
      EXPECT_GT(cv::countNonZero(in.row(0)), 0) << "seed " << seed << ": top edge";
      EXPECT_GT(cv::countNonZero(in.row(in.rows - 1)), 0) << "seed " << seed << ": bottom edge";
      EXPECT_GT(cv::countNonZero(in.col(0)), 0) << "seed " << seed << ": left edge";
      EXPECT_GT(cv::countNonZero(in.col(in.cols - 1)), 0) << "seed " << seed << ": right edge";
      EXPECT_EQ(cv::countNonZero(in), obj.area) << "seed " << seed;
      EXPECT_EQ(obj.area, obj.pixels);
      in_boxes += cv::countNonZero(in);
    }
    EXPECT_EQ(in_boxes, cv::countNonZero(differs)) << "seed " << seed << ": a drawn pixel outside every box";
  }
  EXPECT_GT(objects, 60);
}

TEST(DetSynthTest, OccludedObjectsKeepFortyPercentAndTheirFullBox) {
  SynthDetOptions o = small_options();
  o.max_objects = 12;
  int occluded = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    SynthDetImage s = render_synth_detection(o, seed);
    for (size_t k = 0; k < s.objects.size(); ++k) {
      const auto& obj = s.objects[k];
      EXPECT_GE(double(obj.area), 0.4 * double(obj.pixels)) << "seed " << seed;
      EXPECT_EQ(cv::countNonZero(s.owner == int16_t(k)), obj.area);
      // The visible pixels lie within the (full-extent) box.
      cv::Rect r = cv::boundingRect(s.owner == int16_t(k));
      EXPECT_GE(r.x, int(obj.box.x0));
      EXPECT_GE(r.y, int(obj.box.y0));
      EXPECT_LE(r.x + r.width, int(obj.box.x1));
      EXPECT_LE(r.y + r.height, int(obj.box.y1));
      if (obj.area < obj.pixels) ++occluded;
    }
  }
  EXPECT_GT(occluded, 5) << "objects are drawn over others";
}

TEST(DetSynthTest, ScalesSpanSmallToLarge) {
  SynthDetOptions o;  // 320 x 320
  int small = 0, large = 0, min_side = 1000;
  for (uint64_t seed = 0; seed < 50; ++seed)
    for (const auto& obj : render_synth_detection(o, seed).objects) {
      small += obj.area < 32 * 32;
      large += obj.area > 96 * 96;
      min_side = std::min(min_side, int(std::max(obj.box.x1 - obj.box.x0, obj.box.y1 - obj.box.y0)));
    }
  EXPECT_GT(small, 10);
  EXPECT_GT(large, 10);
  EXPECT_LE(min_side, 16) << "objects down to about 12 px";
}

TEST(DetSynthTest, SameSeedSameBytesOtherSeedOtherBytes) {
  TempDir a, b, c;
  write_synth_detection_dataset(a.path.string(), 4, 3, small_options());
  write_synth_detection_dataset(b.path.string(), 4, 3, small_options());
  write_synth_detection_dataset(c.path.string(), 4, 4, small_options());
  EXPECT_EQ(io::read_file(a.path / "annotations.json"), io::read_file(b.path / "annotations.json"));
  for (const char* f : {"000000.jpg", "000003.jpg"})
    EXPECT_EQ(io::read_file(a.path / "images" / f), io::read_file(b.path / "images" / f)) << f;
  EXPECT_NE(io::read_file(a.path / "annotations.json"), io::read_file(c.path / "annotations.json"));
  EXPECT_NE(io::read_file(a.path / "images/000000.jpg"), io::read_file(c.path / "images/000000.jpg"));
}

TEST(DetSynthTest, StartIdContinuesTheSameSequence) {
  TempDir a, b;
  write_synth_detection_dataset(a.path.string(), 5, 9, small_options());
  write_synth_detection_dataset(b.path.string(), 2, 9, small_options(), 3);
  EXPECT_EQ(io::read_file(a.path / "images/000004.jpg"), io::read_file(b.path / "images/000004.jpg"));
  CocoDataset coco = load_coco_dataset(b.path / "annotations.json");
  ASSERT_EQ(coco.images.size(), 2u);
  EXPECT_EQ(coco.images[0].id, 3);
  EXPECT_EQ(coco.images[0].file_name, "000003.jpg");
  EXPECT_FALSE(fs::exists(b.path / "images/000000.jpg"));
}

TEST(DetSynthTest, AnInterruptedRunLeavesNoAnnotationsFile) {
  TempDir dir;
  write_synth_detection_dataset(dir.path.string(), 2, 0, small_options());
  ASSERT_TRUE(fs::exists(dir.path / "annotations.json"));
  auto stop = [](int done, int) {
    if (done == 2) throw IoError("interrupted");
  };
  EXPECT_THROW(write_synth_detection_dataset(dir.path.string(), 4, 1, small_options(), 0, stop), IoError);
  EXPECT_FALSE(fs::exists(dir.path / "annotations.json")) << "the old file would describe other images";
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

TEST(DetSynthTest, BadOptionsNameTheOption) {
  SynthDetOptions o;
  o.max_objects = 0;
  EXPECT_NE(error_of([&] { check_synth_options(o); }).find("--max_objects"), std::string::npos);
  o = {};
  o.width = 10;
  EXPECT_NE(error_of([&] { render_synth_detection(o, 0); }).find("--size"), std::string::npos);
  o = {};
  TempDir dir;
  EXPECT_NE(error_of([&] { write_synth_detection_dataset(dir.path.string(), -1, 0, o); }).find("--count"),
            std::string::npos);
  EXPECT_NE(error_of([&] { write_synth_detection_dataset(dir.path.string(), 1, 0, o, -5); }).find("--start_id"),
            std::string::npos);
}

}  // namespace
}  // namespace skiff::detection
