#pragma once
/// \file synth.h
/// Synthetic COCO-format detection data: images of drawn shapes (10 classes)
/// with exact boxes, for training and testing the detection suite without
/// downloading COCO (`skiff det synth DIR`).
///
/// Each image has a background (flat, a linear gradient, smoothed noise or a
/// texture of stripes / checks / blobs), clutter that is no object (lines,
/// arcs, polylines, scribbles and dots, drawn under the objects), then 1 to
/// max_objects shapes of random class, size, aspect ratio, rotation and colour,
/// and finally light pixel noise.
///
/// Exact boxes: every object is first drawn into its own mask (no
/// anti-aliasing), the image pixels are painted through that mask, and the box
/// is the extent of the mask: [x0, y0, x1, y1] with x1 = last column + 1 (COCO's
/// x, y, w, h with w = x1 - x0). Objects lie wholly inside the image.
///
/// Occlusion rule: objects may be drawn over earlier ones. A placement is
/// rejected (and another tried, up to 30 times, else the object is left out)
/// when it would leave any object with less than `min_visible` (40%) of its
/// pixels visible. So every object in the image is annotated, each at least
/// 40% visible; its box is its full extent (hidden part included), and its
/// `area` is the number of its pixels still visible (COCO's segmentation area).
///
/// Everything is deterministic: the same options and seed give the same pixels
/// and the same JSON bytes (only skiff's Generator and OpenCV's integer drawing
/// are used).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "suites/detection/boxes.h"

namespace skiff::detection {

/// The class names, in category-id order (id = index + 1): circle, square,
/// triangle, star, ring, cross, diamond, hexagon, arrow, crescent.
const std::vector<std::string>& synth_class_names();

/// Knobs of render_synth_detection(). Each image draws its own values within them.
struct SynthDetOptions {
  int width = 320;   ///< 64..4096
  int height = 320;  ///< 64..4096
  int max_objects = 6;  ///< objects attempted per image: 1..max_objects (1..50)
  /// Shapes' longer box side is drawn log-uniformly in [min_size, max_fraction * min(width, height)].
  int min_size = 12;           ///< >= 8
  double max_fraction = 0.7;   ///< (0, 1]
  double min_visible = 0.4;    ///< the occlusion rule above, in [0, 1]
  bool clutter = true;         ///< distractor strokes under the objects
  bool noise = true;           ///< Gaussian pixel noise (sigma up to 6) over the whole image
  bool flat_background = false;  ///< only flat backgrounds (tests of exact boxes)
  bool occlusion = true;       ///< false: objects never overlap (their boxes are disjoint)
};

/// One drawn object.
struct SynthObject {
  int category_id = 0;   ///< 1..synth_class_names().size()
  Box box;               ///< full extent of its pixels, x1/y1 exclusive (integers)
  int64_t area = 0;      ///< pixels of it still visible in the image
  int64_t pixels = 0;    ///< pixels it covered when drawn (before later objects)
  cv::Vec3b color;       ///< its fill colour (BGR)
};

struct SynthDetImage {
  cv::Mat image;  ///< BGR, CV_8UC3, height x width
  std::vector<SynthObject> objects;  ///< in drawing order (later ones on top)
  cv::Mat owner;  ///< CV_16S: index of the object each pixel shows, -1 for background / clutter
};

/// \throws ValueError naming the option (with its `skiff det synth` spelling,
/// e.g. "--max_objects") when an option is out of range.
void check_synth_options(const SynthDetOptions& options);

/// Renders one image. \throws ValueError as check_synth_options().
SynthDetImage render_synth_detection(const SynthDetOptions& options, uint64_t seed);

/// What write_synth_detection_dataset() wrote.
struct SynthDetSummary {
  int images = 0;
  int64_t annotations = 0;
  int64_t small = 0, medium = 0, large = 0;  ///< COCO's area split: < 32², < 96², larger
};

/// Writes `count` images into `dir` (created if needed) in PaddleDetection's
/// COCO layout:
///   - `images/000000.jpg`, ... (file number = image id, from `start_id`; JPEG quality 95);
///   - `annotations.json`: {"images": [{id, file_name: "000000.jpg", width, height}],
///     "annotations": [{id, image_id, category_id, bbox: [x, y, w, h], area, iscrowd: 0}],
///     "categories": [{id: 1.., name, supercategory: "shape"}]}; annotation ids are
///     image_id * 100 + k + 1 (k the object's index), so sets written with disjoint
///     id ranges can be merged.
/// Image i is rendered with a seed derived from (`seed`, image id), so a set
/// written with start_id is the same images as the tail of a longer one.
/// Every file is written atomically; an existing annotations.json is removed
/// first and the new one written last, so an interrupted run never looks complete.
/// `progress(done, count)` is called after each image.
/// \throws ValueError for count < 0, start_id < 0 or bad options; IoError when a
/// file cannot be written.
SynthDetSummary write_synth_detection_dataset(const std::string& dir, int count, uint64_t seed,
                                              const SynthDetOptions& options = {}, int64_t start_id = 0,
                                              const std::function<void(int, int)>& progress = {});

}  // namespace skiff::detection
