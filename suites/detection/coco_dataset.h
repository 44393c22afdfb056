#pragma once
/// \file coco_dataset.h
/// COCO-format detection data: the ground-truth file (images, annotations,
/// categories) read into plain structs, and detection results in the COCO
/// results format (a JSON array of {image_id, category_id, bbox, score}).
///
/// Boxes are [x, y, w, h] in pixels, (x, y) the top-left corner, as in COCO.
/// Segmentations, keypoints, "info" and "licenses" are ignored.
///
/// Every validation error is a skiff::ValueError whose message names the file
/// and the JSON path of the bad element: "val.json: annotations[12].bbox:
/// width must be > 0, got 0". A file that cannot be read is an IoError.

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace skiff::detection {

/// A box [x, y, w, h] (COCO's bbox), in pixels.
using BoxXywh = std::array<double, 4>;

/// One entry of "images".
struct CocoImage {
  int64_t id = 0;
  std::string file_name;  ///< "" when the file has none
  int64_t width = 0;      ///< 0 when the file has none
  int64_t height = 0;     ///< 0 when the file has none
};

/// One entry of "categories".
struct CocoCategory {
  int64_t id = 0;
  std::string name;
  std::string supercategory;  ///< "" when the file has none
};

/// One entry of "annotations" (a ground-truth object).
struct CocoAnnotation {
  int64_t id = 0;
  int64_t image_id = 0;
  int64_t category_id = 0;
  BoxXywh bbox{};  ///< w > 0 and h > 0
  /// Object area; COCO gives the segmentation's area, which COCO evaluation
  /// uses for the small/medium/large split. When the file has none: w * h.
  double area = 0;
  bool iscrowd = false;  ///< a crowd region: detections inside it are not counted
};

/// A whole ground-truth file, elements in file order.
struct CocoDataset {
  std::vector<CocoImage> images;
  std::vector<CocoAnnotation> annotations;
  std::vector<CocoCategory> categories;

  /// Index into images / categories for an id, or -1 when there is none.
  int64_t image_index(int64_t image_id) const;
  int64_t category_index(int64_t category_id) const;

  /// Fills the id -> index maps; the loader calls it, and code that builds a
  /// dataset by hand calls it after changing images or categories.
  /// \throws ValueError for a duplicate image or category id.
  void build_index();

 private:
  std::unordered_map<int64_t, int64_t> image_index_;
  std::unordered_map<int64_t, int64_t> category_index_;
};

/// One detection in the COCO results format.
struct Detection {
  int64_t image_id = 0;
  int64_t category_id = 0;
  BoxXywh bbox{};  ///< w >= 0 and h >= 0
  double score = 0;
};

/// Reads a COCO ground-truth JSON file.
///
/// Required: "images" (each with an integer "id"), "annotations" (integer "id",
/// "image_id", "category_id" and a "bbox" of 4 finite numbers with w > 0 and
/// h > 0), "categories" (integer "id", string "name"). Optional: images'
/// "file_name", "width", "height"; annotations' "area" (finite, >= 0; default
/// w * h) and "iscrowd" (0/1 or a bool; default 0); categories' "supercategory".
/// \throws IoError when the file cannot be read; ValueError (naming the file and
/// the element, e.g. "annotations[3].image_id: unknown image id 17") for invalid
/// JSON, a missing or mistyped field, a bad box, an unknown image_id or
/// category_id, or a duplicate image, category or annotation id.
CocoDataset load_coco_dataset(const std::filesystem::path& path);

/// load_coco_dataset on JSON text; `source` names it in error messages.
CocoDataset parse_coco_dataset(std::string_view json_text, std::string_view source);

/// Reads a COCO results file: a JSON array of {"image_id", "category_id",
/// "bbox": [x, y, w, h], "score"} (other keys ignored).
/// \throws IoError when it cannot be read; ValueError naming the file and the
/// element ("[4].bbox: height must be >= 0, got -1") for invalid JSON, a missing
/// or mistyped field, a non-finite number, a negative width or height, or an
/// image_id / category_id that `gt` does not have (pycocotools' loadRes also
/// rejects unknown images).
std::vector<Detection> load_coco_results(const std::filesystem::path& path, const CocoDataset& gt);

/// load_coco_results on JSON text; `source` names it in error messages.
std::vector<Detection> parse_coco_results(std::string_view json_text, std::string_view source,
                                          const CocoDataset& gt);

/// The results as COCO results JSON text (one array, newline-terminated);
/// numbers print in their shortest round-trip form.
/// \throws ValueError for a non-finite box coordinate or score (JSON has no NaN).
std::string coco_results_json(const std::vector<Detection>& detections);

/// Writes coco_results_json(detections) to `path` atomically (a temporary file
/// renamed into place, framework/io/file.h): readers see the old file or the
/// whole new one. \throws IoError when the directory is not writable.
void write_coco_results(const std::filesystem::path& path, const std::vector<Detection>& detections);

}  // namespace skiff::detection
