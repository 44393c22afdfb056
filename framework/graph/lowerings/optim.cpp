// ONNX lowerings of the optimizer-update ops (framework/ops/optim/): none, by design.
#include "framework/graph/lowering.h"

SKIFF_NOT_EXPORTABLE(adam_step, "'adam_step' is an optimizer update; export traces inference");
SKIFF_NOT_EXPORTABLE(sgd_step, "'sgd_step' is an optimizer update; export traces inference");
SKIFF_NOT_EXPORTABLE(rmsprop_step, "'rmsprop_step' is an optimizer update; export traces inference");
SKIFF_NOT_EXPORTABLE(adagrad_step, "'adagrad_step' is an optimizer update; export traces inference");
