#pragma once
/// \file reduce.h
/// Reductions over any set of dims. `dims` empty means all dims; negative dims
/// count from the end; `keepdim` keeps reduced dims with size 1. Integer and
/// bool inputs to sum/prod/cumsum accumulate in int64. Float16/bfloat16 inputs
/// accumulate in float32. Results do not depend on the thread count.

#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff {

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor prod(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// Largest / smallest value over dims (gradient shared equally among ties).
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);

struct ValuesIndices {
  Tensor values;   ///< same dtype as the input
  Tensor indices;  ///< int64 positions along the reduced dim (first occurrence)
};
/// Max / min along one dim with the positions. \throws IndexError for a bad dim,
/// ValueError for an empty dim.
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim = false);
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim = false);
/// Index of the max / min along dim (int64).
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);
/// log(sum(exp(x))) computed stably.
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
/// Variance with Bessel-style `correction` (1 = sample variance, 0 = population).
Tensor var(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
/// Standard deviation (named std_dev because `std` would shadow namespace std).
Tensor std_dev(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1,
               bool keepdim = false);
/// p-norm over dims (p = 2 by default; p = inf is max |x|).
Tensor norm(const Tensor& x, double p = 2.0, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// Running sum along dim.
Tensor cumsum(const Tensor& x, int64_t dim);

}  // namespace skiff
