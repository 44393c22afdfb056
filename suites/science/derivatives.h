#pragma once
/// \file derivatives.h
/// Partial derivatives of a PINN's outputs at a set of points, the vocabulary
/// equations are written in.
///
/// A constraint declares the partials it needs (output, multi-index) and asks
/// for them by the same name; two providers compute them:
///  - AutogradDerivatives: nested reverse mode (autograd::grad with
///    create_graph), works for any model and any partial;
///  - JetDerivatives: Taylor mode through PinnNet::jet. Pure partials of any
///    order up to 4, and the mixed u_{x_i x_j} and u_{x_i x_i x_j x_j} through
///    polarization identities over the directions e_i, e_j, e_i + e_j, e_i - e_j.
/// Both return [N] tensors in the network's dtype that stay differentiable with
/// respect to the network's parameters.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "suites/science/network.h"

namespace skiff::science {

/// How many times to differentiate along each input coordinate.
using MultiIndex = std::vector<int>;

struct Partial {
  int output = 0;
  MultiIndex alpha;
  auto operator<=>(const Partial&) const = default;
};

/// "w_xxyy" style name from output and input names (just "w" for the value).
std::string partial_name(const Partial& p, const std::vector<std::string>& outputs,
                         const std::vector<std::string>& inputs);

enum class DerivativeMode { Jet, Autograd };
/// "jet" or "autograd". \throws ValueError naming the accepted values.
DerivativeMode parse_derivative_mode(const std::string& name);

class Derivatives {
 public:
  virtual ~Derivatives() = default;
  /// The outputs [N, outputs].
  virtual Tensor values() = 0;
  /// One partial [N]. \throws ValueError if it was not declared (jet mode) or is out of range.
  virtual Tensor partial(const Partial& p) = 0;
  Tensor value(int output);
};

/// Derivatives of `net` at `points` ([N, inputs] in the net's dtype) for the
/// declared partials. Autograd mode ignores the declaration (it computes on demand).
/// \throws ValueError in jet mode for a partial it cannot form (order > 4 or
/// another mixed pattern): use the autograd mode for those.
std::unique_ptr<Derivatives> make_derivatives(DerivativeMode mode, PinnNet& net, const Tensor& points,
                                              const std::vector<Partial>& needed);

/// Nested-autograd derivatives of any differentiable map `model` ([N, inputs]
/// -> [N, outputs]) at `points`, e.g. of an exact solution written with tensor
/// ops, to check that a problem's residuals vanish on it.
std::unique_ptr<Derivatives> autograd_derivatives(const std::function<Tensor(const Tensor&)>& model, int64_t outputs,
                                                  const Tensor& points);

}  // namespace skiff::science
