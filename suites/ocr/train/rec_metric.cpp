#include "suites/ocr/train/rec_metric.h"

#include <algorithm>
#include <vector>

#include "suites/ocr/train/rec_data.h"

namespace skiff::ocr {

int64_t edit_distance(const std::string& a, const std::string& b) {
  auto x = utf8_chars(a), y = utf8_chars(b);
  std::vector<int64_t> row(y.size() + 1);
  for (size_t j = 0; j <= y.size(); ++j) row[j] = int64_t(j);
  for (size_t i = 1; i <= x.size(); ++i) {
    int64_t diag = row[0];
    row[0] = int64_t(i);
    for (size_t j = 1; j <= y.size(); ++j) {
      int64_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (x[i - 1] == y[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[y.size()];
}

void RecMetric::add(const std::string& prediction, const std::string& truth) {
  std::string p = prediction, t = truth;
  if (ignore_space_) {
    std::erase(p, ' ');
    std::erase(t, ' ');
  }
  ++count_;
  if (p == t) ++correct_;
  size_t longest = std::max(utf8_chars(p).size(), utf8_chars(t).size());
  if (longest > 0) norm_distance_sum_ += double(edit_distance(p, t)) / double(longest);
}

RecMetricResult RecMetric::result() const {
  if (count_ == 0) return {};
  return {double(correct_) / double(count_), 1.0 - norm_distance_sum_ / double(count_), count_};
}

}  // namespace skiff::ocr
