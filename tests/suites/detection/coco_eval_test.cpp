// Tests of suites/detection/coco_eval.h. Every expected number is worked out by
// hand from COCOeval's definition (coco_eval.h) in the comment beside it; the
// golden test compares with numbers pycocotools printed (tests/tools/coco/).
#include "suites/detection/coco_eval.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "framework/core/error.h"
#include "framework/io/file.h"

namespace skiff::detection {
namespace {
namespace fs = std::filesystem;

using Stats = std::array<double, 12>;
constexpr double kNone = -1;  // nothing to measure

// A dataset written by hand: images and categories by id, boxes [x, y, w, h].
struct Gt {
  CocoDataset ds;
  Gt(std::vector<int64_t> images, std::vector<int64_t> categories) {
    for (int64_t id : images) ds.images.push_back({id, "", 0, 0});
    for (int64_t id : categories) ds.categories.push_back({id, "c" + std::to_string(id), ""});
    ds.build_index();
  }
  // area < 0: the box's area.
  Gt& add(int64_t image, int64_t category, BoxXywh box, bool crowd = false, double area = -1) {
    const int64_t id = int64_t(ds.annotations.size()) + 1;
    ds.annotations.push_back({id, image, category, box, area < 0 ? box[2] * box[3] : area, crowd});
    return *this;
  }
};

void expect_stats(const CocoEvalResult& r, const Stats& expected) {
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(r.stats[i], expected[i], 1e-12) << kCocoStatNames[i];
}

TEST(CocoEvalTest, ThresholdsAreNumpyLinspace) {
  const auto& t = coco_iou_thresholds();
  EXPECT_EQ(t[0], 0.5);
  EXPECT_EQ(t[2], 0.6);
  EXPECT_EQ(t[5], 0.75);
  EXPECT_EQ(t[8], 0.8999999999999999);  // numpy's value, one ulp below 0.9
  EXPECT_EQ(t[9], 0.95);
  const auto& r = coco_recall_thresholds();
  EXPECT_EQ(r[0], 0.0);
  EXPECT_EQ(r[50], 0.5);
  EXPECT_EQ(r[100], 1.0);
}

TEST(CocoEvalTest, PerfectDetectionsScoreOne) {
  // Image 1: a small person (20x20) and a large dog; image 2: a medium and a large person.
  Gt gt({1, 2}, {1, 2});
  gt.add(1, 1, {10, 10, 20, 20}).add(1, 2, {100, 100, 150, 120}).add(2, 1, {0, 0, 50, 40}).add(2, 1, {60, 0, 100, 100});
  std::vector<Detection> dets;
  double score = 0.9;
  for (const CocoAnnotation& a : gt.ds.annotations) dets.push_back({a.image_id, a.category_id, a.bbox, score -= 0.1});
  const CocoEvalResult r = evaluate_coco(gt.ds, dets);
  // AR1: one detection per image and category finds 2 of the 3 persons and the dog: (2/3 + 1) / 2.
  expect_stats(r, {1, 1, 1, 1, 1, 1, 5.0 / 6, 1, 1, 1, 1, 1});
  ASSERT_EQ(r.per_class.size(), 2u);
  EXPECT_EQ(r.per_class[0].category_id, 1);
  EXPECT_EQ(r.per_class[0].num_gt, 3);
  EXPECT_NEAR(r.per_class[0].ap, 1.0, 1e-12);  // precision is TP / (TP + FP + 2^-52)
  EXPECT_NEAR(r.per_class[1].ap50, 1.0, 1e-12);
  EXPECT_EQ(r.num_images, 2);
  EXPECT_EQ(r.num_detections, 4);
}

TEST(CocoEvalTest, IouExactlyAtThresholdsMatches) {
  // gt 100x100; a detection of height 60 has IoU 6000 / 10000 = 0.6 exactly, which
  // matches at the thresholds 0.50, 0.55 and 0.60 (IoU >= t): AP = AR = 3/10. Its box
  // (area 6000) is medium: unmatched, it is ignored in the large range, so APl = 0.3
  // too; the medium range has no gt (-1).
  Gt gt({1}, {1});
  gt.add(1, 1, {0, 0, 100, 100});
  CocoEvalResult r = evaluate_coco(gt.ds, {{1, 1, {0, 0, 100, 60}, 0.5}});
  expect_stats(r, {0.3, 1, 0, kNone, kNone, 0.3, 0.3, 0.3, 0.3, kNone, kNone, 0.3});
  // IoU 2/3: thresholds up to 0.65 (4 of 10).
  r = evaluate_coco(gt.ds, {{1, 1, {0, 0, 100, 200.0 / 3}, 0.5}});
  EXPECT_NEAR(r.stats[0], 0.4, 1e-12);
  // IoU 0.9 (the double nearest 0.9) >= 0.8999999999999999: 9 of 10.
  r = evaluate_coco(gt.ds, {{1, 1, {0, 0, 100, 90}, 0.5}});
  EXPECT_NEAR(r.stats[0], 0.9, 1e-12);
  // A shift to the right by 20: IoU 8000 / 12000 = 2/3 again.
  r = evaluate_coco(gt.ds, {{1, 1, {20, 0, 100, 100}, 0.5}});
  EXPECT_NEAR(r.stats[0], 0.4, 1e-12);
  EXPECT_NEAR(r.stats[8], 0.4, 1e-12);
}

TEST(CocoEvalTest, DuplicateDetectionIsAFalsePositive) {
  // Two gt; detections A (0.9), a copy of A (0.8), B (0.7). The copy finds A taken:
  // TP, FP, TP -> precision 1, 1/2, 2/3 at recall 1/2, 1/2, 1; envelope 1, 2/3, 2/3.
  // Recall thresholds 0..0.50 (51) read 1, 0.51..1 (50) read 2/3:
  // AP = (51 + 50 * 2/3) / 101 = 253/303 at every IoU threshold.
  Gt gt({1}, {1});
  gt.add(1, 1, {0, 0, 100, 100}).add(1, 1, {200, 0, 100, 100});
  const CocoEvalResult r = evaluate_coco(
      gt.ds, {{1, 1, {0, 0, 100, 100}, 0.9}, {1, 1, {0, 0, 100, 100}, 0.8}, {1, 1, {200, 0, 100, 100}, 0.7}});
  const double ap = 253.0 / 303;
  expect_stats(r, {ap, ap, ap, kNone, kNone, ap, 0.5, 1, 1, kNone, kNone, 1});
}

TEST(CocoEvalTest, PrecisionEnvelopeLiftsDips) {
  // Three gt; A (0.9) TP, a miss (0.8) FP, B (0.7) TP, C (0.6) TP: precision 1, 1/2,
  // 2/3, 3/4 at recall 1/3, 1/3, 2/3, 1. The envelope turns 2/3 into 3/4, so recall
  // thresholds 0..0.33 (34) read 1, 0.34..0.66 (33) and 0.67..1 (34) read 3/4:
  // AP = (34 + 67 * 0.75) / 101.
  Gt gt({1}, {1});
  gt.add(1, 1, {0, 0, 100, 100}).add(1, 1, {200, 0, 100, 100}).add(1, 1, {400, 0, 100, 100});
  const CocoEvalResult r = evaluate_coco(gt.ds, {{1, 1, {0, 0, 100, 100}, 0.9},
                                                 {1, 1, {0, 300, 100, 100}, 0.8},
                                                 {1, 1, {200, 0, 100, 100}, 0.7},
                                                 {1, 1, {400, 0, 100, 100}, 0.6}});
  EXPECT_NEAR(r.stats[0], (34 + 67 * 0.75) / 101, 1e-12);
  EXPECT_NEAR(r.precision_at(0, 50, 0, 0, 2), 0.75, 1e-12);
  EXPECT_NEAR(r.precision_at(0, 33, 0, 0, 2), 1.0, 1e-12);
}

TEST(CocoEvalTest, CrowdRegionSwallowsDetections) {
  // A person and a crowd region (200x200). Three detections inside the crowd score
  // above the person's: IoU with a crowd is intersection / detection area = 1, so
  // all three match it (a crowd can be matched again and again) and are ignored. The
  // crowd is no gt to find: AP = 1. With maxDets 1 the only detection kept is a
  // crowd one: AR1 = 0.
  Gt gt({1}, {1});
  gt.add(1, 1, {0, 0, 100, 100}).add(1, 1, {200, 0, 200, 200}, /*crowd=*/true);
  const CocoEvalResult r = evaluate_coco(gt.ds, {{1, 1, {210, 10, 50, 50}, 0.95},
                                                 {1, 1, {300, 100, 50, 50}, 0.8},
                                                 {1, 1, {250, 50, 100, 100}, 0.7},
                                                 {1, 1, {0, 0, 100, 100}, 0.6}});
  expect_stats(r, {1, 1, 1, kNone, kNone, 1, 0, 1, 1, kNone, kNone, 1});
  EXPECT_EQ(r.per_class[0].num_gt, 1);
}

TEST(CocoEvalTest, RegularGtWinsOverCrowd) {
  // The detection has IoU 0.6 with the person and lies inside the crowd (IoU 1).
  // Regular gt come first and, once one matched, ignored ones are not looked at:
  // TP at 0.50..0.60; above, it falls to the crowd and is ignored. AP = AR = 0.3.
  Gt gt({1}, {1});
  gt.add(1, 1, {0, 0, 200, 200}, /*crowd=*/true).add(1, 1, {0, 0, 100, 100});
  const CocoEvalResult r = evaluate_coco(gt.ds, {{1, 1, {0, 0, 100, 60}, 0.9}});
  EXPECT_NEAR(r.stats[0], 0.3, 1e-12);
  EXPECT_NEAR(r.stats[8], 0.3, 1e-12);
}

TEST(CocoEvalTest, DetectionsOnImageWithoutGtAreFalsePositives) {
  // Image 1: a gt found at 0.8. Image 2 has no gt and detections at 0.9 and 0.5.
  // Pooled by score: FP, TP, FP -> precision 0, 1/2, 1/3 at recall 0, 1, 1; the
  // envelope makes every recall threshold read 1/2: AP = 0.5.
  Gt gt({1, 2}, {1});
  gt.add(1, 1, {0, 0, 100, 100});
  const CocoEvalResult r = evaluate_coco(
      gt.ds, {{1, 1, {0, 0, 100, 100}, 0.8}, {2, 1, {0, 0, 100, 100}, 0.9}, {2, 1, {50, 50, 100, 100}, 0.5}});
  expect_stats(r, {0.5, 0.5, 0.5, kNone, kNone, 0.5, 1, 1, 1, kNone, kNone, 1});
}

TEST(CocoEvalTest, CategoryWithoutGtIsLeftOut) {
  // Category 1 is found perfectly (AP 1), category 2 has no gt (only a detection):
  // -1 and left out of the means, category 3 has a gt and no detection (AP 0, counted).
  Gt gt({1}, {3, 1, 2});
  gt.add(1, 1, {0, 0, 100, 100}).add(1, 3, {200, 0, 100, 100});
  const CocoEvalResult r =
      evaluate_coco(gt.ds, {{1, 1, {0, 0, 100, 100}, 0.9}, {1, 2, {200, 0, 100, 100}, 0.8}});
  expect_stats(r, {0.5, 0.5, 0.5, kNone, kNone, 0.5, 0.5, 0.5, 0.5, kNone, kNone, 0.5});
  ASSERT_EQ(r.per_class.size(), 3u);  // ascending category id
  EXPECT_EQ(r.per_class[0].category_id, 1);
  EXPECT_NEAR(r.per_class[0].ap, 1.0, 1e-12);
  EXPECT_EQ(r.per_class[1].category_id, 2);
  EXPECT_EQ(r.per_class[1].ap, -1.0);
  EXPECT_EQ(r.per_class[1].num_gt, 0);
  EXPECT_EQ(r.per_class[2].category_id, 3);
  EXPECT_EQ(r.per_class[2].ap, 0.0);
  EXPECT_EQ(r.recall_at(0, 1, 0, 2), -1.0);
  EXPECT_EQ(r.recall_at(0, 2, 0, 2), 0.0);
}

TEST(CocoEvalTest, MaxDetsLimitDetectionsPerImage) {
  // 120 small gt (10x10) in one image, each found exactly, scores descending. Only the
  // best 100 count: recall 100/120, precision 1 up to there and 0 beyond, so recall
  // thresholds 0..0.83 (84) read 1: AP = 84/101. AR1, AR10, AR100 = 1, 10, 100 of 120.
  Gt gt({1}, {1});
  std::vector<Detection> dets;
  for (int i = 0; i < 120; ++i) {
    const BoxXywh box{double(i % 12) * 20, double(i / 12) * 20, 10, 10};
    gt.add(1, 1, box);
    dets.push_back({1, 1, box, 1.0 - 0.001 * i});
  }
  const CocoEvalResult r = evaluate_coco(gt.ds, dets);
  const double ap = 84.0 / 101;
  expect_stats(r, {ap, ap, ap, ap, kNone, kNone, 1.0 / 120, 10.0 / 120, 100.0 / 120, 100.0 / 120, kNone, kNone});
}

TEST(CocoEvalTest, AreaRangesSplitGtByAreaAndDetectionsByBox) {
  // gt S: box 40x40 but "area" 400 (small, as COCO's segmentation area decides);
  // M: 50x50 (medium); L: 100x100 (large). Detections: a small miss (0.99), S (0.9),
  // M (0.8); L is not found.
  //  all:    FP, TP, TP over 3 gt: precision 0, 1/2, 2/3 at recall 0, 1/3, 2/3; the
  //          envelope reads 2/3 up to recall 0.66 (67 thresholds): AP = 67 * (2/3) / 101.
  //  small:  gt S only; M's detection matched the ignored M -> ignored: FP, TP: AP = 1/2.
  //  medium: gt M only; the small miss is outside the range and unmatched -> ignored,
  //          S's detection matched the ignored S -> ignored: AP = 1.
  //  large:  gt L only, every detection ignored: AP = 0, AR = 0.
  // AR1: each image keeps its best detection only, the miss: 0.
  Gt gt({1}, {1});
  gt.add(1, 1, {0, 0, 40, 40}, false, 400).add(1, 1, {100, 0, 50, 50}).add(1, 1, {200, 0, 100, 100});
  const CocoEvalResult r = evaluate_coco(
      gt.ds, {{1, 1, {500, 500, 10, 10}, 0.99}, {1, 1, {0, 0, 40, 40}, 0.9}, {1, 1, {100, 0, 50, 50}, 0.8}});
  const double ap = 67 * (2.0 / 3) / 101;
  expect_stats(r, {ap, ap, ap, 0.5, 1, 0, 0, 2.0 / 3, 2.0 / 3, 1, 1, 0});
}

TEST(CocoEvalTest, ScoresAreRankedAcrossImages) {
  // Image 1: its gt found at 0.6 and a miss at 0.5; image 2: its gt found at 0.8.
  // Ranked over both images: TP, TP, FP -> AP = 1 (image order would give TP, FP,
  // TP and 253/303).
  Gt gt({1, 2}, {1});
  gt.add(1, 1, {0, 0, 100, 100}).add(2, 1, {0, 0, 100, 100});
  const CocoEvalResult r = evaluate_coco(
      gt.ds, {{1, 1, {0, 0, 100, 100}, 0.6}, {1, 1, {300, 300, 100, 100}, 0.5}, {2, 1, {0, 0, 100, 100}, 0.8}});
  EXPECT_NEAR(r.stats[0], 1.0, 1e-12);
}

TEST(CocoEvalTest, NoDetectionsGiveZeroAndNoGtGivesMinusOne) {
  Gt gt({1}, {1});
  gt.add(1, 1, {0, 0, 100, 100});
  expect_stats(evaluate_coco(gt.ds, {}), {0, 0, 0, kNone, kNone, 0, 0, 0, 0, kNone, kNone, 0});
  Gt empty({1}, {1});
  const CocoEvalResult r = evaluate_coco(empty.ds, {{1, 1, {0, 0, 10, 10}, 0.5}});
  for (double s : r.stats) EXPECT_EQ(s, -1.0);
}

TEST(CocoEvalTest, RejectsDetectionsOutsideTheGroundTruth) {
  Gt gt({1}, {1});
  EXPECT_THROW((evaluate_coco(gt.ds, {{2, 1, {0, 0, 1, 1}, 0.5}})), ValueError);
  EXPECT_THROW((evaluate_coco(gt.ds, {{1, 5, {0, 0, 1, 1}, 0.5}})), ValueError);
  EXPECT_THROW((evaluate_coco(gt.ds, {{1, 1, {0, 0, -1, 1}, 0.5}})), ValueError);
  EXPECT_THROW((evaluate_coco(gt.ds, {{1, 1, {0, 0, 1, 1}, std::nan("")}})), ValueError);
}

TEST(CocoEvalTest, SummaryTextAsPycocotoolsPrintsIt) {
  CocoEvalResult r;
  r.stats = {0.5, 1, 0.0625, -1, 0.25, 0.3754, 1.0 / 3, 0.0005, 0.9995, 0.12345, -1, 0.999};
  EXPECT_EQ(coco_summary_text(r),
            " Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.500\n"
            " Average Precision  (AP) @[ IoU=0.50      | area=   all | maxDets=100 ] = 1.000\n"
            " Average Precision  (AP) @[ IoU=0.75      | area=   all | maxDets=100 ] = 0.062\n"
            " Average Precision  (AP) @[ IoU=0.50:0.95 | area= small | maxDets=100 ] = -1.000\n"
            " Average Precision  (AP) @[ IoU=0.50:0.95 | area=medium | maxDets=100 ] = 0.250\n"
            " Average Precision  (AP) @[ IoU=0.50:0.95 | area= large | maxDets=100 ] = 0.375\n"
            " Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets=  1 ] = 0.333\n"
            " Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets= 10 ] = 0.001\n"
            " Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 1.000\n"
            " Average Recall     (AR) @[ IoU=0.50:0.95 | area= small | maxDets=100 ] = 0.123\n"
            " Average Recall     (AR) @[ IoU=0.50:0.95 | area=medium | maxDets=100 ] = -1.000\n"
            " Average Recall     (AR) @[ IoU=0.50:0.95 | area= large | maxDets=100 ] = 0.999\n");
}

TEST(CocoEvalTest, JsonReportWrittenAtomically) {
  Gt gt({1}, {1, 2});
  gt.add(1, 1, {0, 0, 100, 100});
  const CocoEvalResult r = evaluate_coco(gt.ds, {{1, 1, {0, 0, 100, 60}, 0.5}});
  const fs::path dir = fs::temp_directory_path() / ("skiff_coco_eval_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_coco_eval_json(dir / "eval.json", r);
  const nlohmann::json j = nlohmann::json::parse(io::read_file(dir / "eval.json"));
  fs::remove_all(dir);
  EXPECT_NEAR(j["stats"]["AP"].get<double>(), 0.3, 1e-12);
  EXPECT_EQ(j["stats"]["APm"].get<double>(), -1.0);
  EXPECT_EQ(j["stats"].size(), 12u);
  ASSERT_EQ(j["per_class"].size(), 2u);
  EXPECT_EQ(j["per_class"][0]["name"], "c1");
  EXPECT_NEAR(j["per_class"][0]["AP50"].get<double>(), 1.0, 1e-12);
  EXPECT_EQ(j["per_class"][1]["AP"].get<double>(), -1.0);
  EXPECT_EQ(j["num_detections"], 1);
}

TEST(CocoEvalTest, MatchesPycocotoolsOnRandomData) {
  // 40 images, 249 gt (20 crowds), 398 detections with tied scores, one image with
  // 133 detections of one category, a category without gt: tests/tools/coco/make_golden.py
  // ran pycocotools 2.0.11 on them.
  const fs::path dir = fs::path(SKIFF_SOURCE_DIR) / "tests/data/detection";
  const CocoDataset gt = load_coco_dataset(dir / "coco_random_gt.json");
  const std::vector<Detection> dets = load_coco_results(dir / "coco_random_results.json", gt);
  const nlohmann::json expected = nlohmann::json::parse(io::read_file(dir / "coco_random_expected.json"));
  const CocoEvalResult r = evaluate_coco(gt, dets);
  ASSERT_EQ(expected["stats"].size(), 12u);
  for (size_t i = 0; i < 12; ++i)
    EXPECT_NEAR(r.stats[i], expected["stats"][i].get<double>(), 1e-6) << kCocoStatNames[i];
  std::string summary;
  for (const auto& line : expected["summary"]) summary += line.get<std::string>() + "\n";
  EXPECT_EQ(coco_summary_text(r), summary);
  ASSERT_EQ(r.per_class.size(), expected["per_class"].size());
  for (size_t k = 0; k < r.per_class.size(); ++k) {
    EXPECT_EQ(r.per_class[k].category_id, expected["per_class"][k]["category_id"].get<int64_t>());
    EXPECT_NEAR(r.per_class[k].ap, expected["per_class"][k]["AP"].get<double>(), 1e-6) << r.per_class[k].name;
  }
}

}  // namespace
}  // namespace skiff::detection
