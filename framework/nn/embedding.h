#pragma once
/// \file embedding.h
/// Embedding: a lookup table of learned vectors.

#include <optional>
#include <string>

#include "framework/core/rng.h"
#include "framework/nn/module.h"

namespace skiff::nn {

/// indices (any integer dtype, any shape [*]) -> [*, embedding_dim] rows of weight
/// [num_embeddings, embedding_dim], initialized N(0, 1) from `gen`. With
/// padding_idx (negative counts from the end) that row is zeroed at construction
/// and receives no gradient, so it stays a fixed "no token" vector.
/// \throws ValueError for non-positive sizes or padding_idx out of range;
/// forward throws TypeError for non-integer indices and IndexError for
/// out-of-range ones.
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx = std::nullopt,
            Generator* gen = nullptr);
  std::string type_name() const override { return "Embedding"; }
  Tensor forward(const Tensor& indices) override;
  std::optional<int64_t> padding_idx() const { return padding_idx_; }

  Tensor weight;  ///< [num_embeddings, embedding_dim]

 protected:
  std::string extra_repr() const override;

 private:
  int64_t num_, dim_;
  std::optional<int64_t> padding_idx_;
};

}  // namespace skiff::nn
