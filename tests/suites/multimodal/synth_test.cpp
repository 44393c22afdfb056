// The compositional image-caption set: determinism, the held-out pairs kept out of train and
// val, captions that say what the pixels show (colours, positions), and the files written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "framework/core/error.h"
#include "framework/data/image_io.h"
#include "suites/multimodal/synth.h"
#include "tests/temp_dir.h"

namespace skiff::multimodal {
namespace {

// The colour centres synth.cpp draws around (BGR), to find an object's pixels.
const cv::Vec3d kCenters[] = {{40, 40, 215}, {45, 175, 45}, {215, 75, 35}, {40, 215, 225}, {165, 45, 150}, {25, 135, 245}};

int color_index(const std::string& name) {
  const auto& c = synth_colors();
  return int(std::find(c.begin(), c.end(), name) - c.begin());
}

/// Pixels within 40 (per channel) of colour c, and their centroid.
std::pair<int, cv::Point2d> colour_pixels(const cv::Mat& img, int c) {
  int n = 0;
  cv::Point2d sum(0, 0);
  for (int y = 0; y < img.rows; ++y)
    for (int x = 0; x < img.cols; ++x) {
      const cv::Vec3b p = img.at<cv::Vec3b>(y, x);
      bool near = true;
      for (int k = 0; k < 3; ++k) near &= std::abs(double(p[k]) - kCenters[c][k]) <= 40;
      if (near) ++n, sum += cv::Point2d(x, y);
    }
  return {n, n ? sum / n : sum};
}

TEST(MmSynth, SameSeedSamePixels) {
  for (SynthSplit split : {SynthSplit::Train, SynthSplit::Heldout}) {
    const SynthScene a = render_synth_scene(split, 7), b = render_synth_scene(split, 7), c = render_synth_scene(split, 8);
    EXPECT_EQ(cv::norm(a.image, b.image, cv::NORM_INF), 0.0);
    EXPECT_EQ(a.captions, b.captions);
    EXPECT_GT(cv::norm(a.image, c.image, cv::NORM_L1), 0.0);
  }
  EXPECT_EQ(render_synth_scene(SynthSplit::Val, 1, 96).image.rows, 96);
  EXPECT_THROW(render_synth_scene(SynthSplit::Val, 1, 16), ValueError);
}

TEST(MmSynth, HeldOutPairsNeverReachTrainOrVal) {
  std::set<std::string> held;
  std::set<int> shapes, colors;
  for (int s = 0; s < int(synth_shapes().size()); ++s)
    for (int c = 0; c < int(synth_colors().size()); ++c)
      if (held_out_pair(s, c)) {
        held.insert(synth_colors()[size_t(c)] + " " + synth_shapes()[size_t(s)]);
        shapes.insert(s), colors.insert(c);
      }
  ASSERT_EQ(held.size(), 6u);
  EXPECT_EQ(shapes.size(), 6u);  // one per shape
  EXPECT_EQ(colors.size(), 6u);  // and one per colour
  std::set<std::string> heldout_labels;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    for (SynthSplit split : {SynthSplit::Train, SynthSplit::Val}) {
      const SynthScene s = render_synth_scene(split, seed);
      for (const std::string& caption : s.captions)
        for (const std::string& pair : held) {
          // "blue circle" also as "blue circles" (count scenes).
          EXPECT_EQ(caption.find(pair), std::string::npos) << caption;
        }
    }
    const SynthScene h = render_synth_scene(SynthSplit::Heldout, seed);
    EXPECT_EQ(h.kind, "single");
    EXPECT_TRUE(held.count(h.label)) << h.label;
    heldout_labels.insert(h.label);
  }
  EXPECT_EQ(heldout_labels, held);  // every held-out pair is shown
}

TEST(MmSynth, CaptionsSayWhatThePixelsShow) {
  const std::regex relation("an? (\\w+) \\w+ (left of|right of|above|below) an? (\\w+) \\w+");
  const std::regex bad_article("(^| )a [aeiou]");
  int singles = 0, relations = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const SynthScene s = render_synth_scene(SynthSplit::Train, seed, 64);
    for (const std::string& c : s.captions) EXPECT_FALSE(std::regex_search(c, bad_article)) << c;
    if (s.kind == "single") {
      // The label's colour covers the object; no other object colour appears.
      const int c = color_index(s.label.substr(0, s.label.find(' ')));
      EXPECT_GT(colour_pixels(s.image, c).first, 30) << s.label;
      ++singles;
    }
    std::smatch m;
    if (s.kind == "relation" && std::regex_match(s.captions[0], m, relation) && m[1] != m[3]) {
      const auto [n1, p1] = colour_pixels(s.image, color_index(m[1]));
      const auto [n2, p2] = colour_pixels(s.image, color_index(m[3]));
      ASSERT_GT(n1, 10);
      ASSERT_GT(n2, 10);
      const std::string rel = m[2];
      // The first object's centroid is at least 10 pixels on the named side of the second's.
      const double gap = rel == "left of" ? p2.x - p1.x : rel == "right of" ? p1.x - p2.x
                         : rel == "above" ? p2.y - p1.y : p1.y - p2.y;
      EXPECT_GT(gap, 10.0) << s.captions[0];
      ++relations;
    }
  }
  EXPECT_GT(singles, 80);
  EXPECT_GT(relations, 40);
}

TEST(MmSynth, WritesCocoCaptionsTsvAndSummary) {
  skiff::testing::TempDir tmp;
  const std::string dir = (tmp.path / "mm").string();
  int last = 0;
  write_synth_mm_dataset(dir, {.train = 12, .val = 4, .heldout = 5}, 3, 48, [&](int done, int total) {
    EXPECT_EQ(done, last + 1);
    EXPECT_EQ(total, 21);
    last = done;
  });
  EXPECT_EQ(last, 21);
  for (const char* split : {"train", "val", "heldout"}) {
    SCOPED_TRACE(split);
    const auto doc = nlohmann::json::parse(std::ifstream(std::filesystem::path(dir) / (std::string("captions_") + split + ".json")));
    std::ifstream tsv(std::filesystem::path(dir) / (std::string("captions_") + split + ".tsv"));
    size_t lines = 0;
    for (std::string line; std::getline(tsv, line); ++lines) {
      const auto tab = line.find('\t');
      ASSERT_NE(tab, std::string::npos);
      EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / line.substr(0, tab))) << line;
    }
    EXPECT_EQ(lines, doc["annotations"].size());
    for (const auto& im : doc["images"]) {
      const cv::Mat img = data::read_image_file((std::filesystem::path(dir) / "images" / im["file_name"].get<std::string>()).string());
      EXPECT_EQ(img.cols, 48);
      EXPECT_EQ(im["width"], 48);
    }
    for (const auto& a : doc["annotations"]) EXPECT_FALSE(a["caption"].get<std::string>().empty());
  }
  const auto summary = nlohmann::json::parse(std::ifstream(std::filesystem::path(dir) / "synth.json"));
  EXPECT_EQ(summary["held_out_pairs"].size(), 6u);
  EXPECT_EQ(summary["splits"]["heldout"]["scenes"]["single"], 5);
  EXPECT_THROW(write_synth_mm_dataset(dir, {.train = -1}, 0, 64), ValueError);
}

}  // namespace
}  // namespace skiff::multimodal
