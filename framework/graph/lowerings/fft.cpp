// ONNX lowerings of the FFT and complex-number ops (framework/ops/fft/): none.
// skiff's complex dtypes have no counterpart that ONNX ops accept (DFT carries a
// complex value as a trailing [re, im] dim of a real tensor).
#include "framework/graph/lowering.h"

namespace skiff::graph {

SKIFF_NOT_EXPORTABLE(fft_c2c, "'fft_c2c' has no ONNX lowering: it works on complex tensors, which ONNX ops do not take");
SKIFF_NOT_EXPORTABLE(fft_r2c, "'fft_r2c' has no ONNX lowering: it makes complex tensors, which ONNX ops do not take");
SKIFF_NOT_EXPORTABLE(fft_c2r, "'fft_c2r' has no ONNX lowering: it reads complex tensors, which ONNX ops do not take");
SKIFF_NOT_EXPORTABLE(complex, "'complex' has no ONNX lowering: ONNX ops do not take complex tensors");
SKIFF_NOT_EXPORTABLE(real, "'real' has no ONNX lowering: ONNX ops do not take complex tensors");
SKIFF_NOT_EXPORTABLE(imag, "'imag' has no ONNX lowering: ONNX ops do not take complex tensors");
SKIFF_NOT_EXPORTABLE(conj, "'conj' has no ONNX lowering: ONNX ops do not take complex tensors");
SKIFF_NOT_EXPORTABLE(angle, "'angle' has no ONNX lowering: ONNX ops do not take complex tensors");

}  // namespace skiff::graph
