#pragma once
/// \file problems.h
/// Constructors of the built-in problems (registered in problems.cpp) and the
/// helpers they share.
#include <memory>

#include "suites/science/problem.h"

namespace skiff::science {

class RecipeSection;

/// Kirchhoff plate, D lap^2 w = q, simply supported (plate.cpp).
std::unique_ptr<Problem> make_plate_bending(const RecipeSection& s);
/// -lap u = f with Dirichlet data from a manufactured solution (poisson.cpp).
std::unique_ptr<Problem> make_poisson(const RecipeSection& s);

/// Length scale of a box: its shortest side over pi. For a second- or
/// fourth-order elliptic operator on the box this is the reciprocal of the
/// lowest Dirichlet eigenvalue's square root, so a unit load gives a solution
/// of order one in these units.
double poincare_length(const Box& box);

/// physical = nondimensional * scales.inputs (per column), float64.
Tensor to_physical(const Tensor& nondim, const Scales& s);
Tensor to_nondimensional(const Tensor& physical, const Scales& s);

}  // namespace skiff::science
