#pragma once
/// \file jet_formulas.h
/// Faa di Bruno's formula through order 4 and its adjoint, written once as
/// templates over the value type: the CPU kernel instantiates them on float /
/// double per element, the differentiable backward on Tensors (where an
/// undefined Tensor stands for zero). Coefficients are derivatives along a
/// direction, d^k/ds^k, not Taylor coefficients divided by k!.
///
/// For y = f(z) with z's coefficients z1..z4 and f_k = f^(k)(z0):
///   y1 = f1 z1
///   y2 = f2 z1^2 + f1 z2
///   y3 = f3 z1^3 + 3 f2 z1 z2 + f1 z3
///   y4 = f4 z1^4 + 6 f3 z1^2 z2 + f2 (3 z2^2 + 4 z1 z3) + f1 z4
/// dy_k/dz0 is y_k with every f_j replaced by f_(j+1), which is how the
/// gradient for z0 is formed (so the backward needs f_1..f_(K+1)).

namespace skiff::jet {

/// y[0..K-1] = y1..yK from f[0..K-1] = f1..fK and z[0..K-1] = z1..zK.
template <int K, typename T, typename Ops>
[[gnu::always_inline]] inline void compose(const T* f, const T* z, T* y, const Ops& o) {
  const T& z1 = z[0];
  y[0] = o.mul(f[0], z1);
  if constexpr (K >= 2) {
    T z1sq = o.mul(z1, z1);
    y[1] = o.add(o.mul(f[1], z1sq), o.mul(f[0], z[1]));
    if constexpr (K >= 3) {
      y[2] = o.add(o.add(o.mul(f[2], o.mul(z1sq, z1)), o.scale(3, o.mul(f[1], o.mul(z1, z[1])))), o.mul(f[0], z[2]));
    }
    if constexpr (K >= 4) {
      T inner = o.add(o.scale(3, o.mul(z[1], z[1])), o.scale(4, o.mul(z1, z[2])));
      y[3] = o.add(o.add(o.mul(f[3], o.mul(z1sq, z1sq)), o.scale(6, o.mul(f[2], o.mul(z1sq, z[1])))),
                   o.add(o.mul(f[1], inner), o.mul(f[0], z[3])));
    }
  }
}

/// Gradients for z1..zK (gz[0..K-1]) and the part of z0's gradient that comes
/// from y1..yK (gz0), from g[0..K-1] = dL/dy1..dL/dyK and f[0..K] = f1..f(K+1).
template <int K, typename T, typename Ops>
[[gnu::always_inline]] inline void adjoint(const T* f, const T* z, const T* g, T* gz, T& gz0, const Ops& o) {
  const T& z1 = z[0];
  // dy_k/dz_j, accumulated per j.
  gz[0] = o.mul(g[0], f[0]);
  if constexpr (K >= 2) {
    gz[0] = o.add(gz[0], o.scale(2, o.mul(g[1], o.mul(f[1], z1))));
    gz[1] = o.mul(g[1], f[0]);
  }
  if constexpr (K >= 3) {
    T z1sq = o.mul(z1, z1);
    gz[0] = o.add(gz[0], o.scale(3, o.mul(g[2], o.add(o.mul(f[2], z1sq), o.mul(f[1], z[1])))));
    gz[1] = o.add(gz[1], o.scale(3, o.mul(g[2], o.mul(f[1], z1))));
    gz[2] = o.mul(g[2], f[0]);
    if constexpr (K >= 4) {
      T a = o.add(o.add(o.mul(f[3], o.mul(z1sq, z1)), o.scale(3, o.mul(f[2], o.mul(z1, z[1])))), o.mul(f[1], z[2]));
      gz[0] = o.add(gz[0], o.scale(4, o.mul(g[3], a)));
      gz[1] = o.add(gz[1], o.scale(6, o.mul(g[3], o.add(o.mul(f[2], z1sq), o.mul(f[1], z[1])))));
      gz[2] = o.add(gz[2], o.scale(4, o.mul(g[3], o.mul(f[1], z1))));
      gz[3] = o.mul(g[3], f[0]);
    }
  }
  T shifted[K];
  compose<K>(f + 1, z, shifted, o);
  gz0 = o.mul(g[0], shifted[0]);
  for (int k = 1; k < K; ++k) gz0 = o.add(gz0, o.mul(g[k], shifted[k]));
}

/// Plain arithmetic for the kernels.
template <typename T>
struct ScalarOps {
  [[gnu::always_inline]] T add(T a, T b) const { return a + b; }
  [[gnu::always_inline]] T mul(T a, T b) const { return a * b; }
  [[gnu::always_inline]] T scale(double c, T a) const { return T(c) * a; }
};

}  // namespace skiff::jet
