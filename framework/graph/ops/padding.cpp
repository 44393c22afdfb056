#include "framework/graph/ops/padding.h"

#include <algorithm>

namespace skiff::graph::ops {

std::optional<Padding> resolve_padding(const std::string& auto_pad, const std::vector<int64_t>& pads,
                                       const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                                       const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  const size_t n = kernel.size();
  Padding p{std::vector<int64_t>(n, 0), std::vector<int64_t>(n, 0)};
  if (auto_pad == "NOTSET") {
    if (pads.empty()) return p;
    if (pads.size() != 2 * n) return std::nullopt;
    for (size_t i = 0; i < n; ++i) p.begin[i] = pads[i], p.end[i] = pads[i + n];
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) {
      int64_t out = (in[i] + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1 - in[i]);
      int64_t small = total / 2, large = total - small;
      p.begin[i] = auto_pad == "SAME_UPPER" ? small : large;
      p.end[i] = auto_pad == "SAME_UPPER" ? large : small;
    }
  } else if (auto_pad != "VALID") {
    return std::nullopt;
  }
  return p;
}

}  // namespace skiff::graph::ops
