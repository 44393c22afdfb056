#include "suites/detection/train/assigner.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "framework/core/error.h"

namespace skiff::detection {

int CellAssignment::positives() const {
  return int(std::count_if(object.begin(), object.end(), [](int o) { return o >= 0; }));
}

CellAssignment assign_task_aligned(std::span<const float> probs, int num_classes, std::span<const Box> pred_boxes,
                                   std::span<const float> cx, std::span<const float> cy, const GroundTruth& truth,
                                   const TaskAlignedOptions& options) {
  const size_t cells = pred_boxes.size();
  SKIFF_CHECK(num_classes >= 1 && probs.size() == cells * size_t(num_classes) && cx.size() == cells &&
                  cy.size() == cells,
              "assign_task_aligned: {} probabilities, {} boxes and {}/{} centres do not describe {} cells of {} classes",
              probs.size(), pred_boxes.size(), cx.size(), cy.size(), cells, num_classes);
  SKIFF_CHECK(truth.boxes.size() == truth.labels.size(), "assign_task_aligned: {} boxes but {} labels",
              truth.boxes.size(), truth.labels.size());
  CellAssignment result;
  result.object.assign(cells, -1);
  result.score.assign(cells, 0.f);
  const size_t objects = truth.boxes.size();
  if (objects == 0 || cells == 0) return result;

  std::vector<float> best_iou(cells, -1.f);  // IoU with the object a cell currently learns
  std::vector<float> metric(cells, 0.f);      // that object's alignment metric at the cell
  std::vector<size_t> candidates;
  for (size_t j = 0; j < objects; ++j) {
    const Box& g = truth.boxes[j];
    const int label = truth.labels[j];
    SKIFF_CHECK(label >= 0 && label < num_classes, "assign_task_aligned: object {} has label {}, outside 0..{}", j,
                label, num_classes - 1);
    candidates.clear();
    for (size_t i = 0; i < cells; ++i)
      if (cx[i] > g.x0 && cx[i] < g.x1 && cy[i] > g.y0 && cy[i] < g.y1) candidates.push_back(i);
    if (candidates.empty()) continue;
    const float gx = 0.5f * (g.x0 + g.x1), gy = 0.5f * (g.y0 + g.y1);
    auto t_of = [&](size_t i) {
      const double s = probs[i * size_t(num_classes) + size_t(label)];
      return float(std::pow(s, options.alpha) * std::pow(double(iou(pred_boxes[i], g)), options.beta));
    };
    auto dist2 = [&](size_t i) { return (cx[i] - gx) * (cx[i] - gx) + (cy[i] - gy) * (cy[i] - gy); };
    std::vector<float> t(candidates.size());
    for (size_t k = 0; k < candidates.size(); ++k) t[k] = t_of(candidates[k]);
    std::vector<size_t> order(candidates.size());
    std::iota(order.begin(), order.end(), 0);
    const size_t keep = std::min(order.size(), size_t(std::max(1, options.topk)));
    std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(keep), order.end(), [&](size_t a, size_t b) {
      if (t[a] != t[b]) return t[a] > t[b];
      return dist2(candidates[a]) < dist2(candidates[b]);
    });
    for (size_t k = 0; k < keep; ++k) {
      const size_t i = candidates[order[k]];
      const float u = iou(pred_boxes[i], g);
      // A cell claimed twice learns the object its box overlaps most (the first on a tie).
      if (u > best_iou[i]) {
        best_iou[i] = u;
        result.object[i] = int(j);
        metric[i] = t[order[k]];
      }
    }
  }
  // Normalise each object's metrics so its best cell scores its best IoU.
  std::vector<float> max_t(objects, 0.f), max_u(objects, 0.f);
  for (size_t i = 0; i < cells; ++i) {
    const int j = result.object[i];
    if (j < 0) continue;
    max_t[size_t(j)] = std::max(max_t[size_t(j)], metric[i]);
    max_u[size_t(j)] = std::max(max_u[size_t(j)], best_iou[i]);
  }
  constexpr float kEps = 1e-9f;
  for (size_t i = 0; i < cells; ++i) {
    const int j = result.object[i];
    if (j >= 0) result.score[i] = metric[i] / (max_t[size_t(j)] + kEps) * max_u[size_t(j)];
  }
  return result;
}

}  // namespace skiff::detection
