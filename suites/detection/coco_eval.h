#pragma once
/// \file coco_eval.h
/// COCO bounding-box evaluation, as pycocotools' COCOeval (iouType "bbox",
/// default parameters) defines it, number for number.
///
/// For every category k, area range a and image, ground truths (gt) and
/// detections (dt) of that category in that image are matched:
///  - dt are sorted by score (stable, descending) and only the first 100 kept;
///    gt are sorted so that ignored ones come last (stable). A gt is ignored when
///    it is a crowd or its `area` lies outside a (the range's bounds included);
///  - IoU = intersection / union of the boxes, except against a crowd gt:
///    intersection / dt box area;
///  - for each IoU threshold t (0.50:0.05:0.95, as numpy.linspace computes them)
///    each dt in turn takes the gt with the largest IoU >= min(t, 1 - 1e-10)
///    (ties: the later gt) among those not yet taken; a crowd gt can be taken any
///    number of times, and once a dt has a regular gt it does not look at ignored
///    ones. A dt matched to an ignored gt is ignored; so is an unmatched dt whose
///    box area (w * h) lies outside a.
/// Then for each maxDets m in {1, 10, 100} the first m dt of every image (in
/// ascending image id order) are pooled and sorted by score (stable), the
/// non-ignored ones counted as true / false positives:
///   recall[t,k,a,m]   = TP / (number of non-ignored gt), or 0 without dt;
///   precision p_i     = TP_i / (TP_i + FP_i + 2^-52), made non-increasing from
///                       the right (the envelope); for each of the 101 recall
///                       thresholds r (0:0.01:1) the precision at the first
///                       point whose recall >= r, or 0 when recall never gets there.
/// A category/area with no non-ignored gt (or neither gt nor dt) stays -1 and is
/// left out of every mean. Areas: all [0, 1e10], small [0, 32^2], medium
/// [32^2, 96^2], large [96^2, 1e10].
///
/// Deviation: pycocotools treats a gt whose id is 0 as unmatched (it marks
/// matches by gt id); here a match is a flag, so id 0 is an ordinary id.

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/detection/coco_dataset.h"

namespace skiff::detection {

/// Number of IoU thresholds (0.50, 0.55, ..., 0.95), recall thresholds
/// (0, 0.01, ..., 1), area ranges (all, small, medium, large) and maxDets (1, 10, 100).
inline constexpr int kCocoNumIouThresholds = 10;
inline constexpr int kCocoNumRecallThresholds = 101;
inline constexpr int kCocoNumAreaRanges = 4;
inline constexpr int kCocoNumMaxDets = 3;

/// The IoU thresholds exactly as numpy.linspace(.5, .95, 10) gives them
/// (0.8999999999999999 is the ninth), so boundary IoUs match as in pycocotools.
const std::array<double, kCocoNumIouThresholds>& coco_iou_thresholds();
/// The recall thresholds as numpy.linspace(0, 1, 101) gives them.
const std::array<double, kCocoNumRecallThresholds>& coco_recall_thresholds();
/// maxDets: 1, 10, 100.
inline constexpr std::array<int, kCocoNumMaxDets> kCocoMaxDets{1, 10, 100};
/// Area range labels, in the order of the `a` index: "all", "small", "medium", "large".
inline constexpr std::array<const char*, kCocoNumAreaRanges> kCocoAreaNames{"all", "small", "medium", "large"};

/// Names of CocoEvalResult::stats, in order.
inline constexpr std::array<const char*, 12> kCocoStatNames{"AP",  "AP50", "AP75", "APs",   "APm", "APl",
                                                            "AR1", "AR10", "AR100", "ARs", "ARm", "ARl"};

/// AP of one category (precision averaged over the 10 IoU thresholds and 101
/// recall thresholds, area all, maxDets 100), and its AP at IoU 0.5.
struct CocoClassAp {
  int64_t category_id = 0;
  std::string name;
  int64_t num_gt = 0;  ///< non-crowd ground truths of this category
  double ap = -1;      ///< -1 when the category has no non-crowd gt
  double ap50 = -1;
};

/// The result of evaluate_coco.
struct CocoEvalResult {
  /// The 12 numbers COCOeval.summarize() prints, named by kCocoStatNames:
  /// AP, AP50, AP75, APs, APm, APl (maxDets 100), AR1, AR10, AR100, ARs, ARm,
  /// ARl (ARs..ARl at maxDets 100). -1 where nothing could be measured.
  std::array<double, 12> stats{};
  /// One entry per category of the ground truth, ascending category id.
  std::vector<CocoClassAp> per_class;
  /// COCOeval.eval["precision"], [T=10, R=101, K, A=4, M=3] row-major, K in
  /// per_class order; -1 where undefined.
  std::vector<double> precision;
  /// COCOeval.eval["recall"], [T=10, K, A=4, M=3] row-major; -1 where undefined.
  std::vector<double> recall;
  int64_t num_categories = 0;  ///< K
  int64_t num_images = 0;
  int64_t num_detections = 0;

  /// precision[t, r, k, a, m] and recall[t, k, a, m].
  double precision_at(int t, int r, int64_t k, int a, int m) const;
  double recall_at(int t, int64_t k, int a, int m) const;
};

/// Evaluates `detections` against `gt` over every image and category of `gt`
/// (as COCOeval with default Params). Detections of the same image and
/// category keep their given order among equal scores, as pycocotools keeps
/// the results file's order.
/// \throws ValueError for a detection whose image_id or category_id is not in
/// `gt`, or whose box or score is not finite or has a negative width/height.
CocoEvalResult evaluate_coco(const CocoDataset& gt, const std::vector<Detection>& detections);

/// The 12-line summary exactly as COCOeval.summarize() prints it, each line
/// newline-terminated, e.g.
/// " Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.372".
std::string coco_summary_text(const CocoEvalResult& result);

/// {"stats": {"AP": ..., ..., "ARl": ...}, "per_class": [{"category_id",
/// "name", "num_gt", "AP", "AP50"}, ...], "num_images", "num_categories",
/// "num_detections"}.
nlohmann::json coco_eval_json(const CocoEvalResult& result);

/// Writes coco_eval_json(result) atomically (pretty-printed, newline-terminated).
/// \throws IoError when the directory is not writable.
void write_coco_eval_json(const std::filesystem::path& path, const CocoEvalResult& result);

}  // namespace skiff::detection
