// The zoo's NanoDet through the Detector on real photos (Debian's
// python3-skimage sample images): it must find the astronaut, the motorcycle,
// the cat and the cup at sensible boxes, and give the same answer from several
// threads. Pulls the model on first use, hence the "network" label.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "framework/data/image_io.h"
#include "suites/detection/detector.h"

namespace skiff::detection {
namespace {

const char* kImages = "/usr/lib/python3/dist-packages/skimage/data/";

const Detector& detector() {
  static Detector d(DetectorConfig{});
  return d;
}

cv::Mat photo(const std::string& name) {
  std::string path = kImages + name;
  EXPECT_TRUE(std::filesystem::exists(path)) << path << " missing: scripts/setup.sh installs python3-skimage";
  return data::read_image_file(path);
}

/// The best box of `label`, or a zero-score box.
DetectedBox best(const DetectionResult& r, const std::string& label) {
  for (const auto& d : r.boxes)
    if (detector().label(d.class_id) == label) return d;
  return {};
}

struct Case {
  const char* file;
  const char* label;
  float threshold;
  Box expected;  // judged by eye on the photo
};

TEST(NanoDetPhotos, FindsTheObjectAtASensibleBox) {
  const Case cases[] = {
      {"astronaut.png", "person", 0.35f, {10, 10, 370, 512}},
      {"motorcycle_left.png", "motorcycle", 0.35f, {100, 70, 690, 455}},
      {"chelsea.png", "cat", 0.35f, {0, 0, 451, 300}},
      {"coffee.png", "cup", 0.25f, {165, 15, 420, 270}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    DetectorConfig cfg;
    cfg.score_threshold = c.threshold;
    Detector det(cfg);
    DetectionResult r = det.detect(photo(c.file));
    DetectedBox b = best(r, c.label);
    EXPECT_GE(b.score, c.threshold) << "no " << c.label;
    EXPECT_GE(iou(b.box, c.expected), 0.7f) << c.label << " at [" << b.box.x0 << ", " << b.box.y0 << ", " << b.box.x1
                                           << ", " << b.box.y1 << "]";
  }
}

TEST(NanoDetPhotos, TopClassOfEachPhoto) {
  EXPECT_EQ(detector().label(detector().detect(photo("astronaut.png")).boxes.at(0).class_id), "person");
  EXPECT_EQ(detector().label(detector().detect(photo("motorcycle_left.png")).boxes.at(0).class_id), "motorcycle");
  EXPECT_EQ(detector().label(detector().detect(photo("chelsea.png")).boxes.at(0).class_id), "cat");
}

TEST(NanoDetPhotos, SameResultFromSeveralThreads) {
  cv::Mat image = photo("motorcycle_right.png");
  DetectionResult ref = detector().detect(image);
  std::vector<DetectionResult> got(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) threads.emplace_back([&, i] { got[i] = detector().detect(image); });
  for (auto& t : threads) t.join();
  for (const auto& r : got) {
    ASSERT_EQ(r.boxes.size(), ref.boxes.size());
    for (size_t k = 0; k < r.boxes.size(); ++k) {
      EXPECT_EQ(r.boxes[k].class_id, ref.boxes[k].class_id);
      EXPECT_NEAR(r.boxes[k].box.x0, ref.boxes[k].box.x0, 1e-3);
      EXPECT_NEAR(r.boxes[k].score, ref.boxes[k].score, 1e-5);
    }
  }
}

TEST(NanoDetPhotos, EmptyImageIsAnError) {
  EXPECT_ANY_THROW(detector().detect(cv::Mat()));
}

}  // namespace
}  // namespace skiff::detection
