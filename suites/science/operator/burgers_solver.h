#pragma once
/// \file burgers_solver.h
/// Training data for neural operators: the viscous Burgers equation on the
/// periodic unit interval,
///   u_t + (u^2 / 2)_x = nu u_xx,   x in [0, 1),  t in (0, T],
/// solved by a pseudo-spectral method: Fourier in space with the 2/3 rule
/// against aliasing, and the integrating-factor RK4 scheme in time, which
/// treats the stiff viscous term exactly so the step is limited only by the
/// advection (CFL) condition. Initial conditions are draws from the Gaussian
/// random field of Li et al. (FNO, 2020): N(0, sigma^2 (-Laplacian + tau^2)^-alpha).
///
/// burgers_periodic_cole_hopf() is an independent, exact reference for
/// checking the solver: with u = -2 nu (log phi)_x, phi solves the heat
/// equation, whose Fourier modes decay as exp(-nu k^2 t).
///
///   Generator gen(7);
///   auto u0 = gaussian_random_field(1024, gen);
///   auto u1 = solve_burgers_periodic(u0, {.nu = 0.1, .t_end = 1.0, .dt = 5e-4});
#include <cstdint>
#include <vector>

#include "framework/core/rng.h"
#include "framework/tensor/tensor.h"

namespace skiff::science {

struct BurgersSolverOptions {
  double nu = 0.01;
  double t_end = 1.0;
  /// Upper bound on the time step; the solver takes ceil(t_end / dt) equal steps.
  double dt = 5e-4;
};

struct RandomFieldOptions {
  double sigma = 25;
  double tau = 5;
  double alpha = 2;
};

/// A zero-mean draw of the random field on n points x_j = j / n, from its
/// Karhunen-Loeve expansion over the Fourier modes 1 <= k <= n / 3 (the modes
/// the solver resolves). \throws ValueError for n < 8 or odd n.
std::vector<double> gaussian_random_field(int64_t n, Generator& gen, const RandomFieldOptions& o = {});

/// u(., t_end) on the grid of u0 (its size must be even and >= 8).
/// \throws ValueError for bad options, or when the solution leaves the stable
/// step range (names the step and the dt to use instead).
std::vector<double> solve_burgers_periodic(const std::vector<double>& u0, const BurgersSolverOptions& o);
/// The same for every row of u0 ([rows, points] float64) at once. The transforms
/// are the framework's rfft / irfft ops.
Tensor solve_burgers_periodic(const Tensor& u0, const BurgersSolverOptions& o);

/// The exact solution at time t for a zero-mean, band-limited u0 (spectral
/// Cole-Hopf transform on the grid of u0).
std::vector<double> burgers_periodic_cole_hopf(const std::vector<double>& u0, double nu, double t);

/// Pairs (u0, u(., t_end)) sampled on `grid` points, solved on `solver_grid`
/// points (a multiple of grid) and subsampled. Sample i is a pure function of
/// (seed, i): the set is the same for any thread count, and a test set drawn
/// with another seed is independent of the training set.
struct OperatorDataset {
  Tensor inputs;   ///< [samples, grid] float64: u0
  Tensor targets;  ///< [samples, grid] float64: u(., t_end)
};
OperatorDataset make_burgers_dataset(int64_t samples, int64_t grid, int64_t solver_grid, uint64_t seed,
                                     const BurgersSolverOptions& solver, const RandomFieldOptions& field = {});

}  // namespace skiff::science
