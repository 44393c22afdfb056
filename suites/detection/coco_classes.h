#pragma once
/// \file coco_classes.h
/// The 80 COCO object classes in the order detectors trained on COCO number
/// them (0 = person ... 79 = toothbrush), and their ids in COCO files, which
/// run from 1 to 90 with gaps.

#include <cstdint>
#include <string>
#include <vector>

namespace skiff::detection {

/// "person", "bicycle", ... "toothbrush" (80 names).
const std::vector<std::string>& coco80_names();

/// The COCO category id (1..90) of class index 0..79. \throws ValueError out of range.
int64_t coco80_category_id(int index);

}  // namespace skiff::detection
