// ONNX lowerings of the linear-algebra ops (framework/ops/linalg/).
#include "framework/graph/lowering.h"

namespace skiff::graph {
namespace {

/// The batch dims broadcast; the matrix dims are a's rows and b's columns.
void lower_matmul(LoweringContext& c) {
  const DimFlags &fa = c.flags(0), &fb = c.flags(1);
  DimFlags ba(fa.begin(), fa.end() - 2), bb(fb.begin(), fb.end() - 2);
  std::string out = c.node("MatMul", c.values(), {});
  DimFlags flags = broadcast_flags({ba, bb}, size_t(c.output(0).dim()) - 2);
  flags.push_back(fa[fa.size() - 2]);
  flags.push_back(fb.back());
  c.set_output(0, out, flags);
}

}  // namespace

SKIFF_REGISTER_LOWERING(matmul, lower_matmul);

SKIFF_NOT_EXPORTABLE(solve, "'solve' has no ONNX lowering: ONNX has no linear-solve op");
SKIFF_NOT_EXPORTABLE(inverse, "'inverse' has no ONNX lowering: ONNX has no matrix-inverse op");
SKIFF_NOT_EXPORTABLE(cholesky, "'cholesky' has no ONNX lowering: ONNX has no Cholesky op");
SKIFF_NOT_EXPORTABLE(det, "'det' has no ONNX lowering yet (ONNX Det could express it)");

}  // namespace skiff::graph
