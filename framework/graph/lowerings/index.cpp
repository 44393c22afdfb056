// ONNX lowerings of the indexing ops (framework/ops/index/).
#include "framework/graph/lowering.h"

namespace skiff::graph {
namespace {

/// The output has the index's shape.
void lower_gather(LoweringContext& c) {
  c.set_output(0, c.node("GatherElements", c.values(), {{"axis", c.attrs().get_int("dim")}}), c.flags(1));
}

/// x's shape with dim replaced by the (1-D) index's length.
void lower_index_select(LoweringContext& c) {
  const int64_t dim = c.attrs().get_int("dim");
  DimFlags flags = c.flags(0);
  if (c.input(1).dim() == 1) flags[size_t(dim)] = c.flags(1)[0];
  c.set_output(0, c.node("Gather", c.values(), {{"axis", dim}}), flags);
}

/// Rows of the weight: the indices' shape plus the embedding dim.
void lower_embedding(LoweringContext& c) {
  DimFlags flags = c.flags(1);
  flags.push_back(kStatic);
  c.set_output(0, c.node("Gather", {c.value(0), c.value(1)}, {{"axis", int64_t(0)}}), flags);
}

}  // namespace

SKIFF_REGISTER_LOWERING(gather, lower_gather);
SKIFF_REGISTER_LOWERING(index_select, lower_index_select);
SKIFF_REGISTER_LOWERING(embedding, lower_embedding);

SKIFF_NOT_EXPORTABLE(scatter, "'scatter' has no ONNX lowering yet (ScatterElements could express it)");
SKIFF_NOT_EXPORTABLE(scatter_add,
                     "'scatter_add' has no ONNX lowering yet (ScatterElements with reduction=add could express it)");
SKIFF_NOT_EXPORTABLE(index_add, "'index_add' has no ONNX lowering yet (ScatterElements with reduction=add on "
                                "expanded indices could express it)");
SKIFF_NOT_EXPORTABLE(one_hot, "'one_hot' has no ONNX lowering yet (OneHot could express it)");
SKIFF_NOT_EXPORTABLE(sort, "'sort' has no ONNX lowering yet (TopK over the whole dim could express it)");
SKIFF_NOT_EXPORTABLE(topk, "'topk' has no ONNX lowering yet (TopK could express it)");

}  // namespace skiff::graph
