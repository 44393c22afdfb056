#include "framework/core/rng.h"

#include <cmath>
#include <sstream>

#include "framework/core/error.h"

namespace skiff {

double Generator::normal() {
  double u1 = uniform(), u2 = uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

std::string Generator::state() const {
  std::ostringstream os;
  os << seed_ << ' ' << engine_;
  return os.str();
}

void Generator::set_state(const std::string& s) {
  std::istringstream is(s);
  is >> seed_ >> engine_;
  SKIFF_CHECK(!is.fail(), "generator: cannot restore state from a malformed string");
}

Generator& default_generator() {
  static Generator g;
  return g;
}

void manual_seed(uint64_t seed) { default_generator().seed(seed); }

}  // namespace skiff
