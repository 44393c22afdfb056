// dropout: a primitive op whose mask is a pure function of (seed, element index),
// so the backward is the same op applied to the gradient (no mask is stored) and
// gradients of any order follow.
#include "framework/core/rng.h"
#include "framework/ops/common.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/nn/norm.h"

namespace skiff {
namespace {

const OpDef& dropout_op();

std::vector<Tensor> dropout_backward(BackwardContext& ctx) {
  return {call_op1(dropout_op(), {ctx.grad()}, ctx.attrs())};
}
const OpDef kDropout{.name = "dropout", .infer = infer_same_as_input, .backward = dropout_backward};
SKIFF_REGISTER_OP(kDropout);
const OpDef& dropout_op() { return kDropout; }

}  // namespace

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  SKIFF_CHECK(p >= 0.0 && p <= 1.0, "dropout: expected p in [0, 1], got {}", p);
  SKIFF_CHECK_DTYPE(is_floating(x.dtype()), "dropout: expected a float tensor, got {}", dtype_name(x.dtype()));
  if (!training || p == 0.0) return x;
  Generator& g = gen ? *gen : default_generator();
  // One draw per call; the kernel expands it into the mask.
  const int64_t seed = int64_t(g.next_u64());
  return call_op1(kDropout, {x}, {{"p", p}, {"seed", seed}});
}

}  // namespace skiff
