#include "suites/science/operator/burgers_solver.h"

#include <fftw3.h>

#include <cmath>
#include <complex>
#include <exception>
#include <mutex>
#include <numbers>

#include "framework/backends/cpu/fftw_planner.h"
#include "framework/core/error.h"
#include "framework/core/splitmix.h"
#include "framework/core/threading.h"

namespace skiff::science {

namespace {

using cd = std::complex<double>;
constexpr double kTwoPi = 2 * std::numbers::pi;

// A real signal of size n and its half spectrum (n / 2 + 1 modes), with the
// forward (r2c) and unnormalized inverse (c2r) transforms between them. Plans
// are made under the process-wide FFTW planner lock; FFTW_ESTIMATE plans in
// microseconds without touching the arrays.
class RealFft {
 public:
  explicit RealFft(int64_t n) : n_(n) {
    real_ = fftw_alloc_real(size_t(n));
    spectrum_ = fftw_alloc_complex(size_t(n / 2 + 1));
    std::lock_guard lock(cpu::fftw_planner_mutex());
    forward_ = fftw_plan_dft_r2c_1d(int(n), real_, spectrum_, FFTW_ESTIMATE);
    inverse_ = fftw_plan_dft_c2r_1d(int(n), spectrum_, real_, FFTW_ESTIMATE);
  }
  ~RealFft() {
    {
      std::lock_guard lock(cpu::fftw_planner_mutex());
      fftw_destroy_plan(forward_);
      fftw_destroy_plan(inverse_);
    }
    fftw_free(real_);
    fftw_free(spectrum_);
  }
  RealFft(const RealFft&) = delete;
  RealFft& operator=(const RealFft&) = delete;

  int64_t size() const { return n_; }
  int64_t modes() const { return n_ / 2 + 1; }
  double* real() { return real_; }
  cd* spectrum() { return reinterpret_cast<cd*>(spectrum_); }
  void forward() { fftw_execute(forward_); }
  /// n times the inverse transform; overwrites the spectrum (c2r does).
  void inverse() { fftw_execute(inverse_); }

  std::vector<cd> spectrum_of(const std::vector<double>& u) {
    std::copy(u.begin(), u.end(), real_);
    forward();
    return {spectrum(), spectrum() + modes()};
  }
  std::vector<double> signal_of(const std::vector<cd>& s) {
    std::copy(s.begin(), s.end(), spectrum());
    inverse();
    std::vector<double> u(real_, real_ + n_);
    for (double& v : u) v /= double(n_);
    return u;
  }

 private:
  int64_t n_;
  double* real_;
  fftw_complex* spectrum_;
  fftw_plan forward_, inverse_;
};

void check_grid(int64_t n, const char* what) {
  SKIFF_CHECK(n >= 8 && n % 2 == 0, "{}: the grid needs an even number of points >= 8, got {}", what, n);
}

}  // namespace

std::vector<double> gaussian_random_field(int64_t n, Generator& gen, const RandomFieldOptions& o) {
  check_grid(n, "gaussian_random_field");
  SKIFF_CHECK(o.sigma > 0 && o.tau > 0 && o.alpha > 0,
              "gaussian_random_field: sigma, tau and alpha must be positive (got {}, {}, {})", o.sigma, o.tau,
              o.alpha);
  // u(x) = sum_k sqrt(lambda_k) (a_k sqrt2 cos 2pi k x + b_k sqrt2 sin 2pi k x), a, b ~ N(0, 1):
  // the expansion over the orthonormal Fourier basis of L2(0, 1). c2r sums
  // 2 Re(c_k e^{2 pi i k j / n}), so c_k = sqrt(lambda_k) (a_k - i b_k) / sqrt2.
  RealFft fft(n);
  cd* c = fft.spectrum();
  std::fill(c, c + fft.modes(), cd(0));
  for (int64_t k = 1; k <= n / 3; ++k) {
    const double sqrt_eig = o.sigma * std::pow(kTwoPi * kTwoPi * double(k * k) + o.tau * o.tau, -o.alpha / 2);
    const double a = gen.normal(), b = gen.normal();
    c[k] = sqrt_eig * cd(a, -b) / std::numbers::sqrt2;
  }
  fft.inverse();
  return {fft.real(), fft.real() + n};
}

std::vector<double> solve_burgers_periodic(const std::vector<double>& u0, const BurgersSolverOptions& o) {
  const int64_t n = int64_t(u0.size());
  check_grid(n, "Burgers solver");
  SKIFF_CHECK(o.nu > 0 && o.t_end > 0 && o.dt > 0, "Burgers solver: nu, t_end and dt must be positive (got {}, {}, {})",
              o.nu, o.t_end, o.dt);
  RealFft fft(n);
  const int64_t m = fft.modes(), cutoff = n / 3;  // 2/3 rule: modes above n/3 alias in u^2
  const int64_t steps = std::max<int64_t>(1, int64_t(std::ceil(o.t_end / o.dt - 1e-9)));
  const double h = o.t_end / double(steps);
  std::vector<double> kappa(m), half(m), full(m);
  for (int64_t k = 0; k < m; ++k) {
    kappa[k] = kTwoPi * double(k);
    half[k] = std::exp(-o.nu * kappa[k] * kappa[k] * h / 2);  // viscous decay over half a step
    full[k] = half[k] * half[k];
  }

  // N(v) = -F[(u^2 / 2)_x] with u = F^-1 v, dealiased; also reports max |u|.
  double u_max = 0;
  auto nonlinear = [&](const std::vector<cd>& v, std::vector<cd>& out) {
    cd* s = fft.spectrum();
    for (int64_t k = 0; k < m; ++k) s[k] = k <= cutoff ? v[k] : cd(0);
    fft.inverse();
    double* u = fft.real();
    const double scale = 1.0 / double(n);
    for (int64_t j = 0; j < n; ++j) {
      const double uj = u[j] * scale;
      u_max = std::max(u_max, std::abs(uj));
      u[j] = 0.5 * uj * uj;
    }
    fft.forward();
    for (int64_t k = 0; k < m; ++k) out[k] = k <= cutoff ? cd(0, -kappa[k]) * s[k] : cd(0);
  };

  std::vector<cd> v = fft.spectrum_of(u0);
  for (int64_t k = cutoff + 1; k < m; ++k) v[k] = 0;
  std::vector<cd> a(m), b(m), c(m), d(m), w(m);
  // RK4's stability region reaches 2 sqrt(2) along the imaginary axis; the
  // fastest advected mode moves at kappa_max * max|u|.
  const double kappa_max = kTwoPi * double(cutoff);
  for (int64_t step = 0; step < steps; ++step) {
    u_max = 0;
    nonlinear(v, a);
    for (int64_t k = 0; k < m; ++k) w[k] = half[k] * (v[k] + 0.5 * h * a[k]);
    nonlinear(w, b);
    for (int64_t k = 0; k < m; ++k) w[k] = half[k] * v[k] + 0.5 * h * b[k];
    nonlinear(w, c);
    for (int64_t k = 0; k < m; ++k) w[k] = full[k] * v[k] + half[k] * h * c[k];
    nonlinear(w, d);
    for (int64_t k = 0; k < m; ++k)
      v[k] = full[k] * v[k] + h / 6 * (full[k] * a[k] + 2 * half[k] * (b[k] + c[k]) + d[k]);
    const double courant = h * kappa_max * u_max;
    if (!(courant <= 2.5))
      throw ValueError(fmt::format(
          "Burgers solver: step {} of {} is unstable (dt {:.3g} * k_max {:.4g} * max|u| {:.3g} = {:.3g} > 2.5); "
          "use dt <= {:.3g}",
          step + 1, steps, h, kappa_max, u_max, courant, std::isfinite(u_max) ? 2.0 / (kappa_max * u_max) : h / 10));
  }
  return fft.signal_of(v);
}

std::vector<double> burgers_periodic_cole_hopf(const std::vector<double>& u0, double nu, double t) {
  const int64_t n = int64_t(u0.size());
  check_grid(n, "burgers_periodic_cole_hopf");
  RealFft fft(n);
  const int64_t m = fft.modes();
  // The primitive U0 (U0' = u0), periodic because u0 has zero mean.
  std::vector<cd> s = fft.spectrum_of(u0);
  SKIFF_CHECK(std::abs(s[0]) <= 1e-9 * double(n) * (1 + std::abs(s[1])),
              "burgers_periodic_cole_hopf: u0 must have zero mean (mean {:.3g})", s[0].real() / double(n));
  for (int64_t k = 0; k < m; ++k) s[k] = k == 0 || k == m - 1 ? cd(0) : s[k] / cd(0, kTwoPi * double(k));
  std::vector<double> primitive = fft.signal_of(s);
  // phi0 = exp(-U0 / (2 nu)); constant factors cancel in u = -2 nu phi_x / phi.
  std::vector<double> phi0(n);
  for (int64_t j = 0; j < n; ++j) phi0[j] = std::exp(-primitive[j] / (2 * nu));
  std::vector<cd> phi_hat = fft.spectrum_of(phi0), dphi_hat(m);
  for (int64_t k = 0; k < m; ++k) {
    const double kappa = kTwoPi * double(k);
    phi_hat[k] *= std::exp(-nu * kappa * kappa * t);
    dphi_hat[k] = k == m - 1 ? cd(0) : cd(0, kappa) * phi_hat[k];
  }
  std::vector<double> phi = fft.signal_of(phi_hat), dphi = fft.signal_of(dphi_hat), u(n);
  for (int64_t j = 0; j < n; ++j) u[j] = -2 * nu * dphi[j] / phi[j];
  return u;
}

OperatorDataset make_burgers_dataset(int64_t samples, int64_t grid, int64_t solver_grid, uint64_t seed,
                                     const BurgersSolverOptions& solver, const RandomFieldOptions& field) {
  SKIFF_CHECK(samples >= 1, "Burgers dataset: needs at least one sample, got {}", samples);
  check_grid(grid, "Burgers dataset");
  SKIFF_CHECK(solver_grid >= grid && solver_grid % grid == 0,
              "Burgers dataset: the solver grid ({}) must be a multiple of the data grid ({})", solver_grid, grid);
  const int64_t stride = solver_grid / grid;
  std::vector<double> inputs(size_t(samples * grid)), targets(size_t(samples * grid));
  std::exception_ptr failure;
  std::mutex failure_mutex;
#pragma omp parallel for schedule(dynamic) num_threads(num_threads())
  for (int64_t i = 0; i < samples; ++i) {
    try {
      Generator gen(splitmix64(seed ^ splitmix64(uint64_t(i))));
      std::vector<double> u0 = gaussian_random_field(solver_grid, gen, field);
      std::vector<double> u1 = solve_burgers_periodic(u0, solver);
      for (int64_t j = 0; j < grid; ++j) {
        inputs[size_t(i * grid + j)] = u0[size_t(j * stride)];
        targets[size_t(i * grid + j)] = u1[size_t(j * stride)];
      }
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return {from_vector(inputs, Shape{samples, grid}), from_vector(targets, Shape{samples, grid})};
}

}  // namespace skiff::science
