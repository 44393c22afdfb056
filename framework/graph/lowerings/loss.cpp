// ONNX lowerings of the losses (framework/ops/loss/): none; losses belong to
// training, and export traces inference.
#include "framework/graph/lowering.h"

namespace skiff::graph {

SKIFF_NOT_EXPORTABLE(nll_loss, "'nll_loss' is a training loss; export traces inference");
SKIFF_NOT_EXPORTABLE(nll_loss_backward, "'nll_loss_backward' is the gradient of nll_loss; export traces inference");
SKIFF_NOT_EXPORTABLE(ctc_loss, "'ctc_loss' is a training loss with no ONNX counterpart; export traces inference");
SKIFF_NOT_EXPORTABLE(ctc_loss_backward, "'ctc_loss_backward' is the gradient of ctc_loss; export traces inference");

}  // namespace skiff::graph
