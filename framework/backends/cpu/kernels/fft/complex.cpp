// CPU kernels of the complex-tensor element-wise ops (ops/fft/complex.h): one strided
// pass each (loops.h) over std::complex values. Reference: themselves (the CPU oracle);
// tested exactly against std::real/imag/conj/arg in tests/framework/ops/fft/complex_test.cpp.
#include <complex>

#include "framework/backends/cpu/loops.h"

namespace skiff::cpu {
namespace {

template <typename Fn>
void visit_complex(DType t, const char* kernel, Fn&& fn) {
  switch (t) {
    case DType::Complex64: fn(TypeTag<float>{}); return;
    case DType::Complex128: fn(TypeTag<double>{}); return;
    default: SKIFF_THROW(NotImplementedError, "{}: dtype {} is not supported", kernel, dtype_name(t));
  }
}

void real_cpu(const KernelContext& c) {
  visit_complex(c.inputs[0].dtype(), "real", [&](auto tag) {
    using R = typename decltype(tag)::type;
    unary_loop<R, std::complex<R>>(c.outputs[0], c.inputs[0], [](std::complex<R> z) { return z.real(); });
  });
}
void imag_cpu(const KernelContext& c) {
  visit_complex(c.inputs[0].dtype(), "imag", [&](auto tag) {
    using R = typename decltype(tag)::type;
    unary_loop<R, std::complex<R>>(c.outputs[0], c.inputs[0], [](std::complex<R> z) { return z.imag(); });
  });
}
void conj_cpu(const KernelContext& c) {
  visit_complex(c.inputs[0].dtype(), "conj", [&](auto tag) {
    using R = typename decltype(tag)::type;
    using C = std::complex<R>;
    unary_loop<C, C>(c.outputs[0], c.inputs[0], [](C z) { return std::conj(z); });
  });
}
void angle_cpu(const KernelContext& c) {
  visit_complex(c.inputs[0].dtype(), "angle", [&](auto tag) {
    using R = typename decltype(tag)::type;
    unary_loop<R, std::complex<R>>(c.outputs[0], c.inputs[0], [](std::complex<R> z) { return std::arg(z); });
  });
}
void complex_cpu(const KernelContext& c) {
  visit_floating(c.inputs[0].dtype(), "complex", [&](auto tag) {
    using R = typename decltype(tag)::type;
    if constexpr (std::is_same_v<R, float> || std::is_same_v<R, double>)
      binary_loop<std::complex<R>, R>(c.outputs[0], c.inputs[0], c.inputs[1],
                                      [](R re, R im) { return std::complex<R>(re, im); });
    else
      SKIFF_THROW(NotImplementedError, "complex: dtype {} is not supported", dtype_name(c.inputs[0].dtype()));
  });
}

constexpr DTypeSet kF32F64 = dtype_bit(DType::Float32) | dtype_bit(DType::Float64);

}  // namespace

SKIFF_REGISTER_KERNEL(real, CPU, "cpu", kComplexTypes, 0, real_cpu);
SKIFF_REGISTER_KERNEL(imag, CPU, "cpu", kComplexTypes, 0, imag_cpu);
SKIFF_REGISTER_KERNEL(conj, CPU, "cpu", kComplexTypes, 0, conj_cpu);
SKIFF_REGISTER_KERNEL(angle, CPU, "cpu", kComplexTypes, 0, angle_cpu);
SKIFF_REGISTER_KERNEL(complex, CPU, "cpu", kF32F64, 0, complex_cpu);

}  // namespace skiff::cpu
