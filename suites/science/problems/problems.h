#pragma once
/// \file problems.h
/// Constructors of the built-in problems (registered in problems.cpp) and the
/// helpers they share.
#include <memory>

#include "suites/science/problem.h"

namespace skiff::config {
class Section;
}

namespace skiff::science {

/// Kirchhoff plate, D lap^2 w = q, simply supported (plate.cpp).
std::unique_ptr<Problem> make_plate_bending(const config::Section& s);
/// -lap u = f with Dirichlet data from a manufactured solution (poisson.cpp).
std::unique_ptr<Problem> make_poisson(const config::Section& s);

/// lap u + k^2 u = q with a manufactured solution (poisson.cpp).
std::unique_ptr<Problem> make_helmholtz(const config::Section& s);
/// u_t = alpha u_xx in 1-D with an exact solution (heat.cpp).
std::unique_ptr<Problem> make_heat(const config::Section& s);
/// Viscous Burgers u_t + u u_x = nu u_xx, Cole-Hopf reference (burgers.cpp).
std::unique_ptr<Problem> make_burgers(const config::Section& s);
/// Steady 2-D Navier-Stokes, Kovasznay flow (navier_stokes.cpp).
std::unique_ptr<Problem> make_navier_stokes(const config::Section& s);

/// The Cole-Hopf solution of u_t + u u_x = nu u_xx, u(x, 0) = -sin(pi x), at
/// (x, t), by the trapezoidal rule with spacing `step` in the scaled variable.
double burgers_cole_hopf(double x, double t, double nu, double step = 0.01);

/// Length scale of a box: its shortest side over pi. For a second- or
/// fourth-order elliptic operator on the box this is the reciprocal of the
/// lowest Dirichlet eigenvalue's square root, so a unit load gives a solution
/// of order one in these units.
double poincare_length(const Box& box);

/// physical = nondimensional * scales.inputs (per column), float64.
Tensor to_physical(const Tensor& nondim, const Scales& s);
Tensor to_nondimensional(const Tensor& physical, const Scales& s);

}  // namespace skiff::science
