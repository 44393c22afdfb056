// Complex-tensor element-wise op definitions and their gradients (convention in complex.h).
#include "framework/ops/fft/complex.h"

#include <numbers>

#include "framework/ops/common.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/elementwise/unary.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

std::vector<TensorMeta> infer_complex_to_real(const std::vector<Tensor>& in, const Attrs&) {
  return {{in[0].shape(), to_real(in[0].dtype())}};
}
std::vector<TensorMeta> infer_real_to_complex(const std::vector<Tensor>& in, const Attrs& a) {
  Shape s = infer_broadcast(in, a)[0].shape;
  return {{s, to_complex(in[0].dtype())}};
}

std::vector<Tensor> real_bw(BackwardContext& c) { return {to(c.grad(), to_complex(c.grad().dtype()))}; }
std::vector<Tensor> imag_bw(BackwardContext& c) { return {complex(zeros({}, c.grad().dtype()), c.grad())}; }
std::vector<Tensor> conj_bw(BackwardContext& c) { return {conj(c.grad())}; }
std::vector<Tensor> complex_bw(BackwardContext& c) {
  const Tensor& g = c.grad();
  return {c.needs_grad(0) ? sum_to(real(g), c.input_meta(0).shape) : Tensor(),
          c.needs_grad(1) ? sum_to(imag(g), c.input_meta(1).shape) : Tensor()};
}
// d angle = (Re z dIm - Im z dRe) / |z|^2; the numerators vanish at z = 0, so only the
// denominator needs guarding.
std::vector<Tensor> angle_bw(BackwardContext& c) {
  Tensor z = c.input(0);
  Tensor re = real(z), im = imag(z);
  Tensor r2 = add(mul(re, re), mul(im, im));
  Tensor safe = where(eq(r2, 0.0), scalar_like(r2, 1.0), r2);
  Tensor g = div(c.grad(), safe);
  return {complex(neg(mul(g, im)), mul(g, re))};
}

const OpDef kReal{.name = "real", .infer = infer_complex_to_real, .backward = real_bw};
const OpDef kImag{.name = "imag", .infer = infer_complex_to_real, .backward = imag_bw};
const OpDef kConj{.name = "conj", .infer = infer_same_as_input, .backward = conj_bw};
const OpDef kAngle{.name = "angle", .infer = infer_complex_to_real, .backward = angle_bw, .save_inputs = 1};
const OpDef kComplex{.name = "complex", .infer = infer_real_to_complex, .backward = complex_bw};
SKIFF_REGISTER_OP(kReal);
SKIFF_REGISTER_OP(kImag);
SKIFF_REGISTER_OP(kConj);
SKIFF_REGISTER_OP(kAngle);
SKIFF_REGISTER_OP(kComplex);

void check_parts(const Tensor& re, const Tensor& im, const char* op) {
  SKIFF_CHECK_DTYPE((re.dtype() == DType::Float32 || re.dtype() == DType::Float64) && re.dtype() == im.dtype(),
                    "{}: expected two float32 or two float64 tensors, got {} and {}", op, dtype_name(re.dtype()),
                    dtype_name(im.dtype()));
}

}  // namespace

Tensor real(const Tensor& z) { return is_complex(z.dtype()) ? call_op1(kReal, {z}) : z; }
Tensor imag(const Tensor& z) {
  SKIFF_CHECK_DTYPE(is_complex(z.dtype()), "imag: expected a complex64 or complex128 tensor, got {}",
                    dtype_name(z.dtype()));
  return call_op1(kImag, {z});
}
Tensor conj(const Tensor& z) { return is_complex(z.dtype()) ? call_op1(kConj, {z}) : z; }
Tensor angle(const Tensor& z) {
  if (is_complex(z.dtype())) return call_op1(kAngle, {z});
  // Real input: pi for negative values, 0 otherwise (NaN stays NaN), like torch.angle.
  NoGradGuard ng;
  Tensor x = is_floating(z.dtype()) ? z : to(z, DType::Float32);
  Tensor pi = mul(to(lt(x, 0.0), x.dtype()), std::numbers::pi);
  return where(ne(x, x), x, pi);
}
Tensor complex(const Tensor& re, const Tensor& im) {
  check_parts(re, im, "complex");
  return call_op1(kComplex, {re, im});
}
Tensor polar(const Tensor& abs, const Tensor& angle) {
  check_parts(abs, angle, "polar");
  return complex(mul(abs, cos(angle)), mul(abs, sin(angle)));
}

}  // namespace skiff
