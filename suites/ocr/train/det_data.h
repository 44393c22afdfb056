#pragma once
/// \file det_data.h
/// Text-detection data in PaddleOCR's format, and the training targets of a
/// DB (Differentiable Binarization) detector.
///
/// Label files hold one image per line,
///   image_path<TAB>[{"transcription": "...", "points": [[x, y], [x, y], ...]}, ...]
/// the path relative to the dataset's data_dir; a transcription of "###" marks
/// a region to ignore (neither a miss nor a false alarm).
///
/// Targets follow the DB paper (Liao et al., 2020) as PaddleOCR's MakeShrinkMap
/// and MakeBorderMap build them, with r = shrink_ratio and, for a polygon of
/// area A and perimeter L, the offset D = A * (1 - r^2) / L:
///   - shrink map: 1 inside the polygon shrunk by D (the text kernel), else 0;
///     the shrink mask is 0 over ignored or too-small polygons;
///   - threshold map: within the polygon grown by D, 1 - (distance to the
///     polygon's nearest edge) / D, clipped to [0, 1], scaled to
///     [thresh_min, thresh_max]; the threshold mask is 1 inside the grown polygons.
#include <cstdint>
#include <string>
#include <vector>

#include <opencv2/core.hpp>


namespace skiff::ocr {

/// One labelled text region.
struct DetPolygon {
  std::vector<cv::Point2f> points;  ///< at least 3, in image pixels
  std::string text;
  bool ignore = false;  ///< transcription "###"
};

/// One labelled image.
struct DetSample {
  std::string image;  ///< full path (data_dir joined)
  std::vector<DetPolygon> polygons;
};

/// The regions of one det label (the JSON after the tab); `where` ("file:line")
/// names it in errors. \throws ValueError for bad JSON or a region with fewer
/// than 3 points.
std::vector<DetPolygon> parse_det_label(const std::string& label, const std::string& where);

/// Reads det label files. \throws IoError naming a missing label file;
/// ValueError with file:line for a line without a tab, bad JSON, or a region
/// with fewer than 3 points.
std::vector<DetSample> read_det_labels(const std::vector<std::string>& label_files, const std::string& data_dir);

struct DetTargetOptions {
  double shrink_ratio = 0.4;  ///< r of both maps (MakeShrinkMap / MakeBorderMap shrink_ratio)
  double min_text_size = 8;   ///< polygons whose shorter side is smaller are masked out
  double thresh_min = 0.3;    ///< threshold map range
  double thresh_max = 0.7;
  bool shrink = true;  ///< build shrink_map / shrink_mask (MakeShrinkMap)
  bool border = true;  ///< build threshold_map / threshold_mask (MakeBorderMap)
};

/// The four DB training maps of one image, each rows x cols float32 (CV_32FC1).
struct DetTargets {
  cv::Mat shrink_map, shrink_mask, threshold_map, threshold_mask;
};

/// Builds the targets for `polygons` on a rows x cols image (the maps not asked
/// for in `options` stay at their initial values). Both skip the regions the
/// shrink mask masks out: ignored, smaller than min_text_size, or vanishing
/// when shrunk.
DetTargets make_det_targets(const std::vector<DetPolygon>& polygons, int rows, int cols,
                            const DetTargetOptions& options = {});

/// Offsets a polygon by `distance` pixels (negative shrinks) with Clipper
/// (round joins); returns every resulting path (none when it vanishes).
std::vector<std::vector<cv::Point>> offset_polygon(const std::vector<cv::Point2f>& polygon, double distance);

/// The DB offset D = area * (1 - r^2) / perimeter (0 for a degenerate polygon).
double db_offset(const std::vector<cv::Point2f>& polygon, double shrink_ratio);

}  // namespace skiff::ocr
