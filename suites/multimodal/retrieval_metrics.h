#pragma once
/// \file retrieval_metrics.h
/// Recall@K for image -> text and text -> image retrieval: the share of queries whose best
/// ranked correct item is among the first K of the gallery, ranked by similarity (ties counted
/// against the query: an equal-scoring wrong item ranks first).

#include <cstdint>
#include <map>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff::multimodal {

/// similarity [Q, G] (float32 or float64); correct[q] lists the gallery indices that answer
/// query q. Returns K -> recall for each K in ks.
/// \throws ShapeError if similarity is not 2-D or correct has another length than Q; ValueError
///         if a query has no correct item, an index is outside the gallery or a K is not positive.
std::map<int64_t, double> recall_at_k(const Tensor& similarity, const std::vector<std::vector<int64_t>>& correct,
                                      const std::vector<int64_t>& ks = {1, 5, 10});

}  // namespace skiff::multimodal
