#include "suites/science/operator/burgers_solver.h"

#include <cmath>
#include <complex>
#include <exception>
#include <mutex>
#include <numbers>

#include "framework/core/error.h"
#include "framework/core/splitmix.h"
#include "framework/core/threading.h"
#include "framework/ops/fft/fft.h"
#include "framework/ops/ops.h"

namespace skiff::science {

namespace {

using cd = complex128;
constexpr double kTwoPi = 2 * std::numbers::pi;

// `rows` real signals of n points and their half spectra (n / 2 + 1 modes), moved
// between the two by the framework's rfft / irfft ops. The solver's pointwise work
// runs on the plain arrays; the CPU backend caches the FFT plan of each shape, so the
// thousands of transforms of a solve plan once.
class SpectralBatch {
 public:
  SpectralBatch(int64_t rows, int64_t n)
      : rows_(rows), n_(n), signal_(zeros(Shape{rows, n}, DType::Float64)),
        spectrum_(zeros(Shape{rows, n / 2 + 1}, DType::Complex128)) {}

  int64_t rows() const { return rows_; }
  int64_t size() const { return n_; }
  int64_t modes() const { return n_ / 2 + 1; }
  double* signal() { return signal_.data<double>(); }
  cd* spectrum() { return spectrum_.data<cd>(); }
  /// spectrum <- rfft(signal) of every row.
  void forward() { spectrum_ = contiguous(rfft(signal_)); }
  /// signal <- the inverse transform of every row, scaled by 1/n (normalized) or
  /// not (the plain sum over modes).
  void inverse(bool normalized = true) {
    signal_ = contiguous(irfft(spectrum_, n_, -1, normalized ? "backward" : "forward"));
  }

 private:
  int64_t rows_, n_;
  Tensor signal_, spectrum_;
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
  SpectralBatch fft(1, n);
  cd* c = fft.spectrum();
  for (int64_t k = 1; k <= n / 3; ++k) {
    const double sqrt_eig = o.sigma * std::pow(kTwoPi * kTwoPi * double(k * k) + o.tau * o.tau, -o.alpha / 2);
    const double a = gen.normal(), b = gen.normal();
    c[k] = sqrt_eig * cd(a, -b) / std::numbers::sqrt2;
  }
  fft.inverse(/*normalized=*/false);
  return {fft.signal(), fft.signal() + n};
}

Tensor solve_burgers_periodic(const Tensor& u0, const BurgersSolverOptions& o) {
  SKIFF_CHECK(u0.dim() == 2, "Burgers solver: u0 must be [rows, points], got {} dims", u0.dim());
  const int64_t rows = u0.size(0), n = u0.size(1);
  check_grid(n, "Burgers solver");
  SKIFF_CHECK(o.nu > 0 && o.t_end > 0 && o.dt > 0, "Burgers solver: nu, t_end and dt must be positive (got {}, {}, {})",
              o.nu, o.t_end, o.dt);
  NoGradGuard no_grad;
  SpectralBatch fft(rows, n);
  const int64_t m = fft.modes(), cutoff = n / 3;  // 2/3 rule: modes above n/3 alias in u^2
  const int64_t steps = std::max<int64_t>(1, int64_t(std::ceil(o.t_end / o.dt - 1e-9)));
  const double h = o.t_end / double(steps);
  std::vector<double> kappa(m), half(m), full(m);
  for (int64_t k = 0; k < m; ++k) {
    kappa[k] = kTwoPi * double(k);
    half[k] = std::exp(-o.nu * kappa[k] * kappa[k] * h / 2);  // viscous decay over half a step
    full[k] = half[k] * half[k];
  }
  const size_t total = size_t(rows * m);

  // N(v) = -F[(u^2 / 2)_x] with u = F^-1 v, dealiased, for every row; also
  // records max |u| per row.
  std::vector<double> u_max(static_cast<size_t>(rows));
  auto nonlinear = [&](const std::vector<cd>& v, std::vector<cd>& out) {
    cd* s = fft.spectrum();
    for (int64_t r = 0; r < rows; ++r) {
      const cd* vr = v.data() + r * m;
      cd* sr = s + r * m;
      std::copy(vr, vr + cutoff + 1, sr);
      std::fill(sr + cutoff + 1, sr + m, cd(0));
    }
    fft.inverse();
    double* u = fft.signal();
    for (int64_t r = 0; r < rows; ++r) {
      double* ur = u + r * n;
      double peak = u_max[size_t(r)];
      for (int64_t j = 0; j < n; ++j) {
        peak = std::max(peak, std::abs(ur[j]));
        ur[j] = 0.5 * ur[j] * ur[j];
      }
      u_max[size_t(r)] = peak;
    }
    fft.forward();
    s = fft.spectrum();
    for (int64_t r = 0; r < rows; ++r) {
      const cd* sr = s + r * m;
      cd* o = out.data() + r * m;
      // -i kappa s, written out: std::complex's operator* checks for NaN/inf operands.
      for (int64_t k = 0; k <= cutoff; ++k) o[k] = cd(kappa[k] * sr[k].imag(), -kappa[k] * sr[k].real());
      std::fill(o + cutoff + 1, o + m, cd(0));
    }
  };

  std::copy(u0.data<double>(), u0.data<double>() + rows * n, fft.signal());
  fft.forward();
  std::vector<cd> v(fft.spectrum(), fft.spectrum() + total);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = cutoff + 1; k < m; ++k) v[size_t(r * m + k)] = 0;
  std::vector<cd> a(total), b(total), c(total), d(total), w(total);
  auto each = [&](auto&& f) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < m; ++k) f(size_t(r * m + k), k);
  };
  // RK4's stability region reaches 2 sqrt(2) along the imaginary axis; the
  // fastest advected mode moves at kappa_max * max|u|.
  const double kappa_max = kTwoPi * double(cutoff);
  for (int64_t step = 0; step < steps; ++step) {
    std::fill(u_max.begin(), u_max.end(), 0.0);
    nonlinear(v, a);
    each([&](size_t i, int64_t k) { w[i] = half[k] * (v[i] + 0.5 * h * a[i]); });
    nonlinear(w, b);
    each([&](size_t i, int64_t k) { w[i] = half[k] * v[i] + 0.5 * h * b[i]; });
    nonlinear(w, c);
    each([&](size_t i, int64_t k) { w[i] = full[k] * v[i] + half[k] * h * c[i]; });
    nonlinear(w, d);
    each([&](size_t i, int64_t k) {
      v[i] = full[k] * v[i] + h / 6 * (full[k] * a[i] + 2 * half[k] * (b[i] + c[i]) + d[i]);
    });
    for (int64_t r = 0; r < rows; ++r) {
      const double um = u_max[size_t(r)], courant = h * kappa_max * um;
      if (!(courant <= 2.5))
        throw ValueError(fmt::format(
            "Burgers solver: step {} of {} is unstable (dt {:.3g} * k_max {:.4g} * max|u| {:.3g} = {:.3g} > 2.5); "
            "use dt <= {:.3g}",
            step + 1, steps, h, kappa_max, um, courant, std::isfinite(um) ? 2.0 / (kappa_max * um) : h / 10));
    }
  }
  std::copy(v.begin(), v.end(), fft.spectrum());
  fft.inverse();
  return from_vector(std::vector<double>(fft.signal(), fft.signal() + rows * n), Shape{rows, n});
}

std::vector<double> solve_burgers_periodic(const std::vector<double>& u0, const BurgersSolverOptions& o) {
  check_grid(int64_t(u0.size()), "Burgers solver");
  return solve_burgers_periodic(from_vector(u0, Shape{1, int64_t(u0.size())}), o).to_vector<double>();
}

std::vector<double> burgers_periodic_cole_hopf(const std::vector<double>& u0, double nu, double t) {
  const int64_t n = int64_t(u0.size());
  check_grid(n, "burgers_periodic_cole_hopf");
  NoGradGuard no_grad;
  SpectralBatch fft(1, n);
  const int64_t m = fft.modes();
  auto spectrum_of = [&](const std::vector<double>& u) {
    std::copy(u.begin(), u.end(), fft.signal());
    fft.forward();
    return std::vector<cd>(fft.spectrum(), fft.spectrum() + m);
  };
  auto signal_of = [&](const std::vector<cd>& spectrum) {
    std::copy(spectrum.begin(), spectrum.end(), fft.spectrum());
    fft.inverse();
    return std::vector<double>(fft.signal(), fft.signal() + n);
  };
  // The primitive U0 (U0' = u0), periodic because u0 has zero mean.
  std::vector<cd> s = spectrum_of(u0);
  SKIFF_CHECK(std::abs(s[0]) <= 1e-9 * double(n) * (1 + std::abs(s[1])),
              "burgers_periodic_cole_hopf: u0 must have zero mean (mean {:.3g})", s[0].real() / double(n));
  for (int64_t k = 0; k < m; ++k) s[k] = k == 0 || k == m - 1 ? cd(0) : s[k] / cd(0, kTwoPi * double(k));
  std::vector<double> primitive = signal_of(s);
  // phi0 = exp(-U0 / (2 nu)); constant factors cancel in u = -2 nu phi_x / phi.
  std::vector<double> phi0(n);
  for (int64_t j = 0; j < n; ++j) phi0[j] = std::exp(-primitive[j] / (2 * nu));
  std::vector<cd> phi_hat = spectrum_of(phi0), dphi_hat(m);
  for (int64_t k = 0; k < m; ++k) {
    const double kappa = kTwoPi * double(k);
    phi_hat[k] *= std::exp(-nu * kappa * kappa * t);
    dphi_hat[k] = k == m - 1 ? cd(0) : cd(0, kappa) * phi_hat[k];
  }
  std::vector<double> phi = signal_of(phi_hat), dphi = signal_of(dphi_hat), u(n);
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
  // Solved in blocks of rows, one transform op per block and RK stage: with 64 rows
  // the ops' fixed cost vanishes (4 rows per block took twice as long in all).
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (samples + kBlock - 1) / kBlock;
  std::vector<double> inputs(size_t(samples * grid)), targets(size_t(samples * grid));
  std::exception_ptr failure;
  std::mutex failure_mutex;
#pragma omp parallel for schedule(dynamic) num_threads(num_threads())
  for (int64_t block = 0; block < blocks; ++block) {
    try {
      const int64_t first = block * kBlock, rows = std::min(kBlock, samples - first);
      std::vector<double> u0(size_t(rows * solver_grid));
      for (int64_t r = 0; r < rows; ++r) {
        Generator gen(splitmix64(seed ^ splitmix64(uint64_t(first + r))));
        auto field_r = gaussian_random_field(solver_grid, gen, field);
        std::copy(field_r.begin(), field_r.end(), u0.begin() + r * solver_grid);
      }
      const Tensor u1 = solve_burgers_periodic(from_vector(u0, Shape{rows, solver_grid}), solver);
      const double* u = u1.data<double>();
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < grid; ++j) {
          const size_t at = size_t((first + r) * grid + j);
          inputs[at] = u0[size_t(r * solver_grid + j * stride)];
          targets[at] = u[r * solver_grid + j * stride];
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
