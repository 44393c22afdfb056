#include "framework/nn/embedding.h"

#include "framework/nn/init.h"
#include "framework/ops/index/index.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff::nn {

Embedding::Embedding(int64_t num, int64_t dim, std::optional<int64_t> padding_idx, Generator* gen)
    : num_(num), dim_(dim) {
  SKIFF_CHECK(num > 0 && dim > 0, "Embedding: expected positive sizes, got num_embeddings={} embedding_dim={}", num,
              dim);
  if (padding_idx) {
    int64_t p = *padding_idx;
    SKIFF_CHECK(p >= -num && p < num, "Embedding: padding_idx {} is out of range for {} embeddings", p, num);
    padding_idx_ = p < 0 ? p + num : p;
  }
  weight = register_parameter("weight", empty({num, dim}));
  init::normal_(weight, 0.0, 1.0, gen);
  if (padding_idx_) detail::fill(select(detach(weight), 0, *padding_idx_), 0.0);
}

Tensor Embedding::forward(const Tensor& indices) {
  SKIFF_CHECK_DTYPE(is_integral(indices.dtype()), "Embedding: expected integer indices, got {} {}",
                    dtype_name(indices.dtype()), indices.shape());
  return embedding(weight, indices.dtype() == DType::Int64 ? indices : skiff::to(indices, DType::Int64), padding_idx_);
}

std::string Embedding::extra_repr() const {
  return padding_idx_ ? fmt::format("{}, {}, padding_idx={}", num_, dim_, *padding_idx_)
                      : fmt::format("{}, {}", num_, dim_);
}

}  // namespace skiff::nn
