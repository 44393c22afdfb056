#include "suites/detection/boxes.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "framework/core/error.h"

namespace skiff::detection {

float iou(const Box& a, const Box& b) {
  const float iw = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  const float ih = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  const float inter = iw > 0 && ih > 0 ? iw * ih : 0.f;
  const float uni = a.area() + b.area() - inter;
  return uni > 0 ? inter / uni : 0.f;
}

namespace {

/// Expected bin of one side's distribution: sum_i softmax(logits)_i * i.
float distribution_integral(const float* logits, int bins) {
  float top = logits[0];
  for (int i = 1; i < bins; ++i) top = std::max(top, logits[i]);
  float sum = 0, weighted = 0;
  for (int i = 0; i < bins; ++i) {
    const float e = std::exp(logits[i] - top);
    sum += e;
    weighted += e * float(i);
  }
  return weighted / sum;
}

}  // namespace

std::vector<DetectedBox> decode_gfl(const std::vector<GflLevel>& levels, const GflDecodeOptions& o) {
  SKIFF_CHECK(o.num_classes > 0 && o.reg_max > 0, "GFL decode: num_classes {} and reg_max {} must be positive",
              o.num_classes, o.reg_max);
  const int bins = o.reg_max + 1;
  std::vector<DetectedBox> out;
  for (size_t l = 0; l < levels.size(); ++l) {
    const GflLevel& lv = levels[l];
    SKIFF_CHECK(lv.scores.size() % size_t(o.num_classes) == 0 && lv.grid_width > 0,
                "GFL decode: level {}: {} scores are not whole cells of {} classes", l, lv.scores.size(), o.num_classes);
    const int64_t cells = int64_t(lv.scores.size()) / o.num_classes;
    SKIFF_CHECK(int64_t(lv.box_logits.size()) == cells * 4 * bins,
                "GFL decode: level {}: {} box logits for {} cells of 4 x {} bins", l, lv.box_logits.size(), cells, bins);
    // The best class score of each cell picks the cells worth decoding.
    std::vector<float> best(static_cast<size_t>(cells));
    for (int64_t c = 0; c < cells; ++c) {
      const float* s = lv.scores.data() + c * o.num_classes;
      best[size_t(c)] = *std::max_element(s, s + o.num_classes);
    }
    std::vector<int64_t> order(static_cast<size_t>(cells));
    std::iota(order.begin(), order.end(), 0);
    if (o.max_cells_per_level > 0 && cells > o.max_cells_per_level) {
      std::partial_sort(order.begin(), order.begin() + o.max_cells_per_level, order.end(),
                        [&](int64_t a, int64_t b) { return best[size_t(a)] > best[size_t(b)]; });
      order.resize(size_t(o.max_cells_per_level));
      std::sort(order.begin(), order.end());
    }
    for (int64_t c : order) {
      if (best[size_t(c)] < o.score_threshold) continue;
      const float cx = (float(c % lv.grid_width) + 0.5f) * float(lv.stride);
      const float cy = (float(c / lv.grid_width) + 0.5f) * float(lv.stride);
      const float* d = lv.box_logits.data() + c * 4 * bins;
      Box b{cx - distribution_integral(d, bins) * float(lv.stride), cy - distribution_integral(d + bins, bins) * float(lv.stride),
            cx + distribution_integral(d + 2 * bins, bins) * float(lv.stride),
            cy + distribution_integral(d + 3 * bins, bins) * float(lv.stride)};
      if (o.clip_width > 0) b.x0 = std::clamp(b.x0, 0.f, o.clip_width), b.x1 = std::clamp(b.x1, 0.f, o.clip_width);
      if (o.clip_height > 0) b.y0 = std::clamp(b.y0, 0.f, o.clip_height), b.y1 = std::clamp(b.y1, 0.f, o.clip_height);
      const float* s = lv.scores.data() + c * o.num_classes;
      for (int k = 0; k < o.num_classes; ++k)
        if (s[k] >= o.score_threshold) out.push_back({k, s[k], b});
    }
  }
  return out;
}

std::vector<DetectedBox> class_aware_nms(std::vector<DetectedBox> boxes, float iou_threshold, int max_detections) {
  std::stable_sort(boxes.begin(), boxes.end(), [](const DetectedBox& a, const DetectedBox& b) { return a.score > b.score; });
  std::vector<DetectedBox> kept;
  for (const auto& b : boxes) {
    if (max_detections > 0 && int(kept.size()) >= max_detections) break;
    bool suppressed = false;
    for (const auto& k : kept)
      if (k.class_id == b.class_id && iou(k.box, b.box) > iou_threshold) {
        suppressed = true;
        break;
      }
    if (!suppressed) kept.push_back(b);
  }
  return kept;
}

}  // namespace skiff::detection
