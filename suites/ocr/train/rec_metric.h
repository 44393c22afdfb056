#pragma once
/// \file rec_metric.h
/// Recognition accuracy as PaddleOCR's RecMetric computes it: `acc` is the
/// share of lines read exactly, `norm_edit_dis` is 1 - the mean of
/// edit_distance / max(len(pred), len(truth)) over characters (code points).
/// With ignore_space, spaces are removed from both sides first.
#include <cstdint>
#include <string>

namespace skiff::ocr {

/// Levenshtein distance between two UTF-8 strings, counted in code points.
int64_t edit_distance(const std::string& a, const std::string& b);

struct RecMetricResult {
  double acc = 0;
  double norm_edit_dis = 0;
  int64_t count = 0;
};

class RecMetric {
 public:
  explicit RecMetric(bool ignore_space = true) : ignore_space_(ignore_space) {}
  void add(const std::string& prediction, const std::string& truth);
  /// Zeros when nothing was added.
  RecMetricResult result() const;

 private:
  bool ignore_space_;
  int64_t count_ = 0, correct_ = 0;
  double norm_distance_sum_ = 0;
};

}  // namespace skiff::ocr
