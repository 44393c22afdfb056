#include "suites/ocr/train/det_loss.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "framework/core/error.h"
#include "framework/ops/ops.h"

namespace skiff::ocr {

namespace {

// Which negative pixels the hard-negative term takes: those whose loss exceeds `cut`,
// plus those equal to it at weight `tie_weight`, so exactly `count` pixels count
// even when losses tie (a saturated P gives many equal values).
struct HardNegatives {
  double cut = std::numeric_limits<double>::infinity();
  double tie_weight = 0;
};

HardNegatives hard_negatives(const Tensor& loss, const Tensor& negative, int64_t count) {
  Tensor l = contiguous(detach(loss)), n = contiguous(negative);
  std::vector<float> values;
  values.reserve(size_t(l.numel()));
  for (int64_t i = 0; i < l.numel(); ++i)
    if (n.data<float>()[i] > 0) values.push_back(l.data<float>()[i]);
  count = std::min<int64_t>(count, int64_t(values.size()));
  if (count <= 0) return {};
  std::nth_element(values.begin(), values.begin() + (count - 1), values.end(), std::greater<float>());
  const float cut = values[size_t(count - 1)];
  int64_t above = 0, equal = 0;
  for (float v : values) above += v > cut, equal += v == cut;
  return {cut, double(count - above) / double(equal)};
}

}  // namespace

DbLossParts db_loss(const DbMaps& maps, const data::Example& batch, const DbLossOptions& o) {
  const Tensor& gt = batch.at("shrink_map");
  const Tensor& mask = batch.at("shrink_mask");
  const Tensor& thresh_gt = batch.at("threshold_map");
  const Tensor& thresh_mask = batch.at("threshold_mask");
  SKIFF_CHECK_SHAPE(maps.shrink.dim() == 4 && maps.shrink.size(1) == 1 && gt.dim() == 3 &&
                        maps.shrink.size(0) == gt.size(0) && maps.shrink.size(2) == gt.size(1) &&
                        maps.shrink.size(3) == gt.size(2),
                    "DB loss: the model gives {} but the targets are {}", maps.shrink.shape(), gt.shape());
  Tensor shrink_p = squeeze(maps.shrink, 1), binary = squeeze(maps.binary, 1);

  // Balanced cross-entropy with hard negative mining.
  Tensor positive = mul(gt, mask), negative = mul(sub(1.0, gt), mask);
  const double positives = sum(positive).item<double>();
  const auto negatives = int64_t(std::min(sum(negative).item<double>(), positives * o.negative_ratio));
  Tensor bce = maps.shrink_logits.defined()
                   ? binary_cross_entropy_with_logits(squeeze(maps.shrink_logits, 1), gt, {}, {}, Reduction::None)
                   // P saturates to exactly 0 or 1 in float32; clamped, a confident wrong pixel costs
                   // about 14, not the 100 of a clamped log(0), and does not swamp the hard negatives.
                   : binary_cross_entropy(clamp(shrink_p, 1e-6, 1.0 - 1e-6), gt, {}, Reduction::None);
  HardNegatives pick = hard_negatives(bce, negative, negatives);
  Tensor hard = mul(negative, add(to(skiff::gt(detach(bce), pick.cut), DType::Float32),
                                  mul(to(eq(detach(bce), pick.cut), DType::Float32), pick.tie_weight)));
  Tensor shrink = div(add(sum(mul(bce, positive)), sum(mul(bce, hard))), positives + double(negatives) + o.eps);

  // A model without a threshold branch (an exported detector) trains P alone.
  Tensor l1 = maps.threshold.defined()
                  ? div(sum(mul(abs(sub(squeeze(maps.threshold, 1), thresh_gt)), thresh_mask)), add(sum(thresh_mask), o.eps))
                  : zeros({}, DType::Float32);

  Tensor inter = sum(mul(mul(binary, gt), mask));
  Tensor uni = add(add(sum(mul(binary, mask)), sum(mul(gt, mask))), o.eps);
  Tensor dice = sub(1.0, div(mul(inter, 2.0), uni));

  DbLossParts parts;
  parts.total = add(add(mul(shrink, o.alpha), mul(l1, o.beta)), dice);
  parts.shrink = shrink.item<double>();
  parts.threshold = l1.item<double>();
  parts.binary = dice.item<double>();
  return parts;
}

}  // namespace skiff::ocr
