#pragma once
/// \file op_spec.h
/// The op spec table (issue 18 item 7; PyTorch's OpInfo, ggml's test-backend-ops):
/// one OpSpec per registered op, giving sample inputs over the op's dtypes, an
/// independent reference for each sample, error inputs, and gradient flags.
/// spec_suites_test.cpp runs generic suites over every entry; a new op needs only
/// its spec (one registration in tests/framework/ops/specs/<family>_specs.cpp).

#include <functional>
#include <string>
#include <vector>

#include "framework/core/error.h"
#include "framework/core/rng.h"
#include "framework/tensor/tensor.h"

// Specs are designated initializers that leave the fields they do not need at their
// defaults; GCC's -Wextra would flag every one of them.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace skiff::spec {

using Tensors = std::vector<Tensor>;
using RunFn = std::function<Tensors(const Tensors&)>;
/// A property the outputs must have, for ops whose result is not unique or is
/// easier to verify than to recompute (solve: A x = b). Returns "" when it holds.
using CheckFn = std::function<std::string(const Tensors& inputs, const Tensors& outputs)>;

/// One call of the op through the public API on given inputs.
struct Sample {
  std::string note;  ///< what the sample covers ("broadcast [3,1] x [4]", "transposed")
  Tensors inputs;    ///< may be strided views, expanded, or empty
  RunFn run;         ///< the public function under test, on `inputs`
  RunFn ref;         ///< the expected outputs, computed independently (dtype included)
  CheckFn check;     ///< used instead of (or besides) `ref`
  bool gradcheck = true;  ///< false: no finite-difference check (a kink, random, integer data)
  /// Float inputs gradcheck holds constant (class weights, which the op documents as
  /// never differentiated).
  std::vector<int> constant_inputs;
  double tol_scale = 1;   ///< widens the per-dtype tolerance (long accumulations)
};

/// A call that must throw `kind` with `substr` in its message.
struct ErrorCase {
  std::string note;
  std::string kind;    ///< Error::kind(): "ShapeError", "TypeError", ...
  std::string substr;  ///< names the op or the offending argument/shape
  std::function<void()> call;
};

/// An ErrorCase expecting E: throws_<ShapeError>("rank", "conv2d", [] { ... }).
template <typename E>
ErrorCase throws_(std::string note, std::string substr, std::function<void()> call) {
  return {std::move(note), E(std::string()).kind(), std::move(substr), std::move(call)};
}

struct OpSpec {
  std::string op;             ///< the OpDef name (registered_ops())
  std::vector<DType> dtypes;  ///< every dtype the samples are generated in
  std::function<std::vector<Sample>(DType, Generator&)> samples;
  std::function<std::vector<ErrorCase>()> errors;  ///< null: the op has no argument to get wrong
  bool grad = false;      ///< first-order gradcheck on the float64 samples
  bool gradgrad = false;  ///< second-order gradcheck too
  /// For an op that is some op's backward: the spec whose gradcheck must run it.
  std::string backward_of;
  /// Why the op has no reference (empty: it has one). Reported, never silently skipped.
  std::string no_reference;
  /// Why no sample has a strided / an empty input, or why a differentiable op is
  /// not gradchecked (empty: the suite requires one).
  std::string no_strided, no_empty, no_grad;
  /// Dtypes of the op's CPU kernel that no public call reaches, with the reason
  /// (e.g. exp on int32 computes in float32); the dtype coverage test accepts them.
  std::vector<DType> unreachable_dtypes;
};

/// Adds a spec to the table (once per op, from a static initializer).
bool register_spec(OpSpec spec);
/// Every registered spec, sorted by op name.
const std::vector<OpSpec>& spec_table();
/// The spec of `op`. \throws ValueError when there is none.
const OpSpec& spec_for(const std::string& op);

#define SKIFF_OP_SPEC_CONCAT_INNER(a, b) a##b
#define SKIFF_OP_SPEC_CONCAT(a, b) SKIFF_OP_SPEC_CONCAT_INNER(a, b)
/// Registers the OpSpec expression that follows: SKIFF_OP_SPEC(OpSpec{.op = "add", ...});
#define SKIFF_OP_SPEC(...) \
  static const bool SKIFF_OP_SPEC_CONCAT(skiff_op_spec_, __LINE__) = ::skiff::spec::register_spec(__VA_ARGS__)

// ---- dtype sets ---------------------------------------------------------------------

inline const std::vector<DType> kFloats{DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
inline const std::vector<DType> kF32F64{DType::Float32, DType::Float64};
inline const std::vector<DType> kInts{DType::UInt8, DType::Int8, DType::Int32, DType::Int64};
inline const std::vector<DType> kComplex{DType::Complex64, DType::Complex128};
/// Concatenates dtype lists.
std::vector<DType> operator+(std::vector<DType> a, const std::vector<DType>& b);

}  // namespace skiff::spec
