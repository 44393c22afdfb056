#include "suites/detection/train/gfl_loss.h"

#include <algorithm>
#include <cmath>

#include "framework/core/error.h"
#include "framework/ops/ops.h"

namespace skiff::detection {

Tensor varifocal_loss(const Tensor& logits, const Tensor& target, const Tensor& positive, double alpha,
                      double gamma) {
  SKIFF_CHECK_SHAPE(logits.shape() == target.shape() && logits.shape() == positive.shape(),
                    "varifocal_loss: logits {}, target {} and positive {} differ in shape", logits.shape(),
                    target.shape(), positive.shape());
  Tensor p = sigmoid(logits);
  Tensor weight = add(mul(mul(pow(p, gamma), sub(1.0, positive)), alpha), mul(target, positive));
  // Binary cross-entropy with logits, in its overflow-free form softplus(x) - x t.
  Tensor bce = sub(softplus(logits), mul(logits, target));
  return sum(mul(bce, weight));
}

Tensor giou_loss(const Tensor& pred, const Tensor& target) {
  SKIFF_CHECK_SHAPE(pred.dim() == 2 && pred.size(1) == 4 && pred.shape() == target.shape(),
                    "giou_loss: expected two [P, 4] box tensors, got {} and {}", pred.shape(), target.shape());
  auto col = [](const Tensor& t, int64_t i) { return select(t, 1, i); };
  Tensor px0 = col(pred, 0), py0 = col(pred, 1), px1 = col(pred, 2), py1 = col(pred, 3);
  Tensor gx0 = col(target, 0), gy0 = col(target, 1), gx1 = col(target, 2), gy1 = col(target, 3);
  constexpr double kEps = 1e-10;
  Tensor pred_area = mul(clamp_min(sub(px1, px0), 0), clamp_min(sub(py1, py0), 0));
  Tensor true_area = mul(clamp_min(sub(gx1, gx0), 0), clamp_min(sub(gy1, gy0), 0));
  Tensor inter = mul(clamp_min(sub(minimum(px1, gx1), maximum(px0, gx0)), 0),
                     clamp_min(sub(minimum(py1, gy1), maximum(py0, gy0)), 0));
  Tensor uni = add(sub(add(pred_area, true_area), inter), kEps);
  Tensor enclosing = add(mul(sub(maximum(px1, gx1), minimum(px0, gx0)), sub(maximum(py1, gy1), minimum(py0, gy0))), kEps);
  Tensor giou = sub(div(inter, uni), div(sub(enclosing, uni), enclosing));
  return sub(1.0, giou);
}

Tensor distribution_focal_loss(const Tensor& logits, const Tensor& target) {
  SKIFF_CHECK_SHAPE(logits.dim() == 2 && logits.size(1) >= 2 && target.dim() == 1 && target.size(0) == logits.size(0),
                    "distribution_focal_loss: expected logits [R, bins] and targets [R], got {} and {}",
                    logits.shape(), target.shape());
  const int64_t rows = logits.size(0), bins = logits.size(1);
  // The targets are constants: the bin indices and weights are computed here.
  const std::vector<float> t = contiguous(to(detach(target), DType::Float32)).to_vector<float>();
  const size_t n_rows = static_cast<size_t>(rows);
  std::vector<int64_t> left(n_rows), right(n_rows);
  std::vector<float> w_left(n_rows), w_right(n_rows);
  for (size_t r = 0; r < n_rows; ++r) {
    const float v = std::clamp(t[r], 0.f, float(bins - 1) - 1e-3f);
    left[r] = int64_t(std::floor(v));
    right[r] = left[r] + 1;
    w_left[r] = float(right[r]) - v;
    w_right[r] = v - float(left[r]);
  }
  Tensor log_p = log_softmax(logits, 1);
  Tensor at_left = squeeze(gather(log_p, 1, from_vector(left, {rows, 1})), 1);
  Tensor at_right = squeeze(gather(log_p, 1, from_vector(right, {rows, 1})), 1);
  const DType dtype = logits.dtype();
  return neg(add(mul(at_left, to(from_vector(w_left), dtype)), mul(at_right, to(from_vector(w_right), dtype))));
}

Tensor expected_distance(const Tensor& logits) {
  SKIFF_CHECK_SHAPE(logits.dim() == 2, "expected_distance: expected logits [R, bins], got {}", logits.shape());
  Tensor bins = arange(0, double(logits.size(1)), 1, logits.dtype());
  return squeeze(matmul(softmax(logits, 1), unsqueeze(bins, 1)), 1);
}

GflLoss gfl_loss(const DenseOutputs& outputs, const AnchorPoints& anchors, const std::vector<GroundTruth>& truth,
                 int reg_max, const GflLossOptions& options) {
  const Tensor& cls = outputs.cls_logits;
  const Tensor& reg = outputs.reg_logits;
  const int64_t n = cls.size(0), cells = cls.size(1), classes = cls.size(2), bins = reg_max + 1;
  SKIFF_CHECK(int64_t(truth.size()) == n, "gfl_loss: {} ground-truth lists for a batch of {}", truth.size(), n);
  SKIFF_CHECK_SHAPE(anchors.size() == cells && reg.size(0) == n && reg.size(1) == cells && reg.size(2) == 4 * bins,
                    "gfl_loss: {} anchor points, class logits {} and box logits {} (reg_max {}) disagree",
                    anchors.size(), cls.shape(), reg.shape(), reg_max);

  // The assigner's view of the predictions: probabilities and decoded boxes, as constants.
  std::vector<float> probs, distances;
  {
    NoGradGuard no_grad;
    probs = contiguous(sigmoid(detach(cls))).to_vector<float>();
    distances = contiguous(expected_distance(reshape(detach(reg), {n * cells * 4, bins}))).to_vector<float>();
  }
  std::vector<float> target(size_t(n * cells * classes), 0.f), positive(target.size(), 0.f);
  std::vector<int64_t> pos_index;  // n * cells + cell
  std::vector<float> pos_weight, pos_box, pos_centre, pos_scale, pos_bins;
  double score_sum = 0;
  std::vector<Box> pred(static_cast<size_t>(cells));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < cells; ++i) {
      const float* d = &distances[size_t((b * cells + i) * 4)];
      const float s = anchors.stride[size_t(i)], x = anchors.cx[size_t(i)], y = anchors.cy[size_t(i)];
      pred[size_t(i)] = Box{x - d[0] * s, y - d[1] * s, x + d[2] * s, y + d[3] * s};
    }
    const std::span<const float> image_probs(probs.data() + b * cells * classes, size_t(cells * classes));
    CellAssignment a = assign_task_aligned(image_probs, int(classes), pred, anchors.cx, anchors.cy, truth[size_t(b)],
                                           options.assigner);
    for (int64_t i = 0; i < cells; ++i) {
      const int j = a.object[size_t(i)];
      if (j < 0) continue;
      const float score = a.score[size_t(i)];
      const size_t at = size_t((b * cells + i) * classes + truth[size_t(b)].labels[size_t(j)]);
      target[at] = score;
      positive[at] = 1.f;
      score_sum += score;
      const Box& g = truth[size_t(b)].boxes[size_t(j)];
      const float s = anchors.stride[size_t(i)], x = anchors.cx[size_t(i)], y = anchors.cy[size_t(i)];
      pos_index.push_back(b * cells + i);
      pos_weight.push_back(score);
      pos_box.insert(pos_box.end(), {g.x0, g.y0, g.x1, g.y1});
      pos_centre.insert(pos_centre.end(), {x, y, x, y});
      pos_scale.insert(pos_scale.end(), {-s, -s, s, s});
      pos_bins.insert(pos_bins.end(), {(x - g.x0) / s, (y - g.y0) / s, (g.x1 - x) / s, (g.y1 - y) / s});
    }
  }
  const double normaliser = std::max(score_sum, 1.0);

  GflLoss loss;
  loss.positives = int64_t(pos_index.size());
  Tensor vfl = div(varifocal_loss(cls, from_vector(target, cls.shape()), from_vector(positive, cls.shape())), normaliser);
  loss.vfl = vfl.to_vector<float>()[0];
  loss.total = mul(vfl, options.vfl_weight);
  if (pos_index.empty()) return loss;

  const int64_t p = loss.positives;
  Tensor rows = reshape(index_select(reshape(reg, {n * cells, 4 * bins}), 0, from_vector(pos_index)), {p * 4, bins});
  Tensor weight = from_vector(pos_weight);
  Tensor boxes = add(from_vector(pos_centre, {p, 4}), mul(reshape(expected_distance(rows), {p, 4}), from_vector(pos_scale, {p, 4})));
  Tensor giou = div(sum(mul(giou_loss(boxes, from_vector(pos_box, {p, 4})), weight)), normaliser);
  Tensor dfl = div(sum(mul(mean(reshape(distribution_focal_loss(rows, from_vector(pos_bins)), {p, 4}), {1}), weight)),
                   normaliser);
  loss.giou = giou.to_vector<float>()[0];
  loss.dfl = dfl.to_vector<float>()[0];
  loss.total = add(loss.total, add(mul(giou, options.giou_weight), mul(dfl, options.dfl_weight)));
  return loss;
}

}  // namespace skiff::detection
