// Recall@K (retrieval_metrics.h).
#include "suites/multimodal/retrieval_metrics.h"

#include <algorithm>
#include <limits>

#include "framework/core/error.h"
#include "framework/ops/ops.h"

namespace skiff::multimodal {

std::map<int64_t, double> recall_at_k(const Tensor& similarity, const std::vector<std::vector<int64_t>>& correct,
                                      const std::vector<int64_t>& ks) {
  SKIFF_CHECK_SHAPE(similarity.dim() == 2, "recall_at_k: expected a [queries, gallery] similarity, got shape {}",
                    similarity.shape());
  const int64_t queries = similarity.size(0), gallery = similarity.size(1);
  SKIFF_CHECK_SHAPE(int64_t(correct.size()) == queries, "recall_at_k: {} queries but {} lists of correct items",
                    queries, correct.size());
  for (int64_t k : ks) SKIFF_CHECK(k > 0, "recall_at_k: K must be positive, got {}", k);
  const std::vector<double> s = contiguous(to(similarity, DType::Float64)).to_vector<double>();
  std::map<int64_t, double> recall;
  for (int64_t k : ks) recall[k] = 0;
  for (int64_t q = 0; q < queries; ++q) {
    SKIFF_CHECK(!correct[size_t(q)].empty(), "recall_at_k: query {} has no correct item", q);
    const double* row = s.data() + q * gallery;
    std::vector<bool> is_correct(size_t(gallery), false);
    double best = -std::numeric_limits<double>::infinity();
    for (int64_t g : correct[size_t(q)]) {
      SKIFF_CHECK(g >= 0 && g < gallery, "recall_at_k: query {}: correct item {} is outside the gallery of {}", q, g,
                  gallery);
      is_correct[size_t(g)] = true;
      best = std::max(best, row[g]);
    }
    int64_t rank = 0;  // wrong items scoring at least as high as the best correct one
    for (int64_t g = 0; g < gallery; ++g) rank += !is_correct[size_t(g)] && row[g] >= best;
    for (int64_t k : ks) recall[k] += rank < k ? 1.0 : 0.0;
  }
  for (auto& [k, r] : recall) r = queries > 0 ? r / double(queries) : 0.0;
  return recall;
}

}  // namespace skiff::multimodal
