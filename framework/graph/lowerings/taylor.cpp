// ONNX lowerings of Taylor-mode differentiation (framework/ops/taylor/): none.
#include "framework/graph/lowering.h"

namespace skiff::graph {

SKIFF_NOT_EXPORTABLE(activation_jet, "'activation_jet' (Taylor-mode derivatives) is a fused skiff op with no ONNX "
                                     "counterpart (activation_jet_reference computes it with element-wise ops)");
SKIFF_NOT_EXPORTABLE(activation_jet_backward,
                     "'activation_jet_backward' is the gradient of activation_jet; export traces inference");

}  // namespace skiff::graph
