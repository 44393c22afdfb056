// The generic suites run over the op spec table (issue 18 item 7). Each test is
// instantiated once per op, named after it (OpSpec/MatchesReference/conv2d), so a
// failure says which op broke; SCOPED_TRACE adds the dtype and the sample's note.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "framework/autograd/gradcheck.h"
#include "framework/ops/ops.h"
#include "tests/framework/ops/specs/op_spec.h"
#include "tests/framework/ops/specs/reference.h"

namespace skiff::spec {
namespace {

// One seed per (op, dtype) keeps failures reproducible and samples independent.
Generator generator_for(const std::string& op, DType dtype) {
  return Generator(std::hash<std::string>{}(op) ^ (uint64_t(dtype) * 0x9E3779B97F4A7C15ull));
}

std::string where_(const OpSpec& s, DType t, const Sample& x) {
  return s.op + " [" + std::string(dtype_name(t)) + "] " + x.note;
}

class OpSpecTest : public ::testing::TestWithParam<std::string> {
 protected:
  const OpSpec& spec() const { return spec_for(GetParam()); }
  /// Calls fn(dtype, sample) for every sample of every dtype of the spec.
  template <typename Fn>
  void for_each_sample(Fn&& fn) const {
    for (DType t : spec().dtypes) {
      Generator gen = generator_for(spec().op, t);
      for (const Sample& s : spec().samples(t, gen)) {
        SCOPED_TRACE(where_(spec(), t, s));
        fn(t, s);
      }
    }
  }
};

// The ops whose spec passes `keep`: each suite is instantiated only for the ops it
// applies to (ctest runs every instance as its own process, so skips are not free).
std::vector<std::string> spec_names(const std::function<bool(const OpSpec&)>& keep = nullptr) {
  std::vector<std::string> names;
  for (const auto& s : spec_table())
    if (!keep || keep(s)) names.push_back(s.op);
  return names;
}
bool has_kernels(const OpSpec& s) { return !op_def(s.op).view; }

// ---- (a) every sample against its reference ----------------------------------------------

TEST_P(OpSpecTest, MatchesReference) {
  int checked = 0;
  for_each_sample([&](DType, const Sample& s) {
    Tensors out = s.run(s.inputs);
    if (s.ref) {
      std::string m = compare_all(out, s.ref(s.inputs), s.tol_scale);
      EXPECT_EQ(m, "") << spec().op << " differs from its reference";
      ++checked;
    }
    if (s.check) {
      std::string m = s.check(s.inputs, out);
      EXPECT_EQ(m, "") << spec().op << " breaks its reference property";
      ++checked;
    }
    if (!s.ref && !s.check) {
      EXPECT_NE(spec().no_reference, "") << spec().op << ": sample without a reference";
    }
  });
  if (spec().no_reference.empty()) {
    EXPECT_GT(checked, 0) << spec().op << ": no sample was checked";
  }
}

// ---- (b) strided inputs give what their contiguous copies give -----------------------------

TEST_P(OpSpecTest, StridedInputsMatchContiguous) {
  int strided = 0;
  for_each_sample([&](DType, const Sample& s) {
    if (!any_strided(s.inputs)) return;
    ++strided;
    Tensors a = s.run(s.inputs), b = s.run(contiguous_copies(s.inputs));
    EXPECT_EQ(compare_all(a, b, s.tol_scale), "") << spec().op << ": a strided input changes the result";
  });
  if (spec().no_strided.empty()) {
    EXPECT_GT(strided, 0) << spec().op << " has no sample with a strided (transposed / stepped / expanded) input";
  }
}

// ---- (c) empty inputs give empty outputs of the right shape --------------------------------

TEST_P(OpSpecTest, EmptyInputs) {
  int empty = 0;
  for_each_sample([&](DType, const Sample& s) {
    if (!any_empty(s.inputs)) return;
    ++empty;
    Tensors out;
    ASSERT_NO_THROW(out = s.run(s.inputs)) << spec().op << " fails on an empty input";
    if (!s.ref) return;
    Tensors want = s.ref(s.inputs);
    for (size_t i = 0; i < want.size() && i < out.size(); ++i)
      EXPECT_EQ(out[i].shape(), want[i].shape()) << spec().op << " output " << i;
  });
  if (spec().no_empty.empty()) {
    EXPECT_GT(empty, 0) << spec().op << " has no empty-input sample (set no_empty with the reason)";
  }
}

// ---- (d) gradients ----------------------------------------------------------------------------

// Float64 leaves (contiguous copies: gradcheck perturbs elements in place, which an
// expanded input would alias) for the float64 inputs; the rest pass through.
Tensors grad_leaves(const Sample& s) {
  Tensors out;
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    const Tensor& x = s.inputs[i];
    bool constant = std::count(s.constant_inputs.begin(), s.constant_inputs.end(), int(i)) > 0;
    out.push_back(x.defined() && x.dtype() == DType::Float64 && !constant ? detail::contiguous_copy(x).set_requires_grad()
                                                                          : x);
  }
  return out;
}

int64_t grad_numel(const Tensors& in) {
  int64_t n = 0;
  for (const auto& x : in)
    if (x.defined() && x.dtype() == DType::Float64) n += x.numel();
  return n;
}

// The first output as one real tensor: a complex result is folded as re + im / 2, so
// both parts reach the check (gradcheck compares real Jacobians).
autograd::TensorFn scalar_output(const Sample& s) {
  return [&s](const Tensors& in) {
    Tensor y = s.run(in)[0];
    return is_complex(y.dtype()) ? add(real(y), mul(imag(y), 0.5)) : y;
  };
}

// Runs the spec's gradchecks on its small samples with float64 inputs (generated as
// float64, or as complex128 for complex ops, whose samples then carry float64 parts);
// returns how many ran.
int run_gradchecks(const OpSpec& spec, bool second_order) {
  const bool has_f64 = std::count(spec.dtypes.begin(), spec.dtypes.end(), DType::Float64) > 0;
  const DType t = has_f64 ? DType::Float64 : DType::Complex128;
  Generator gen = generator_for(spec.op, t);
  int ran = 0;
  for (const Sample& s : spec.samples(t, gen)) {
    const int64_t n = grad_numel(s.inputs);
    if (!s.gradcheck || n == 0 || any_empty(s.inputs) || n > (second_order ? 32 : 64)) continue;
    if (ran >= (second_order ? 2 : 3)) break;
    SCOPED_TRACE(where_(spec, t, s));
    // Default tolerances: tol_scale widens the comparison with a reference, not this.
    const autograd::GradcheckOptions opt;
    autograd::GradcheckResult r;
    try {
      r = second_order ? autograd::gradgradcheck(scalar_output(s), grad_leaves(s), opt)
                       : autograd::gradcheck(scalar_output(s), grad_leaves(s), opt);
    } catch (const Error& e) {
      r = {false, std::string("threw ") + e.kind() + ": " + e.what()};
    }
    EXPECT_TRUE(r.ok) << spec.op << (second_order ? " gradgradcheck: " : " gradcheck: ") << r.message;
    ++ran;
  }
  return ran;
}

class OpGradTest : public OpSpecTest {};
class OpGradGradTest : public OpSpecTest {};
class OpBackwardTest : public OpSpecTest {};
class OpErrorTest : public OpSpecTest {};
class OpKernelTest : public OpSpecTest {};

TEST_P(OpGradTest, Gradcheck) {
  EXPECT_GT(run_gradchecks(spec(), false), 0) << spec().op << ": no float64 sample small enough to gradcheck";
}

TEST_P(OpGradGradTest, Gradgradcheck) {
  EXPECT_GT(run_gradchecks(spec(), true), 0) << spec().op << ": no float64 sample small enough to gradgradcheck";
}

/// Records the names of the ops call_op runs (outermost calls only).
struct OpNames : detail::OpObserver {
  std::set<std::string> seen;
  void on_op(const OpDef& op, const Tensors&, const Tensors&, const Attrs&, bool) override { seen.insert(op.name); }
};

TEST_P(OpBackwardTest, RunsUnderItsForwardsGradcheck) {
  const OpSpec& fwd = spec_for(spec().backward_of);
  ASSERT_TRUE(fwd.grad) << fwd.op << " must be gradchecked for its backward " << spec().op << " to be tested";
  OpNames names;
  detail::OpObserver* prev = detail::set_op_observer(&names);
  run_gradchecks(fwd, false);
  if (fwd.gradgrad) run_gradchecks(fwd, true);
  detail::set_op_observer(prev);
  std::string seen;
  for (const auto& n : names.seen) seen += " " + n;
  EXPECT_TRUE(names.seen.count(spec().op)) << spec().op << " never ran under the gradchecks of " << fwd.op
                                           << "; ops that ran:" << seen;
}

// ---- (e) error inputs ---------------------------------------------------------------------

TEST_P(OpErrorTest, ThrowsTheDocumentedError) {
  for (const ErrorCase& e : spec().errors()) {
    SCOPED_TRACE(spec().op + ": " + e.note);
    try {
      e.call();
      ADD_FAILURE() << spec().op << ": " << e.note << ": expected " << e.kind << ", nothing was thrown";
    } catch (const Error& err) {
      EXPECT_EQ(std::string(err.kind()), e.kind) << err.what();
      EXPECT_NE(std::string(err.what()).find(e.substr), std::string::npos)
          << spec().op << ": message should name '" << e.substr << "': " << err.what();
    } catch (const std::exception& err) {
      ADD_FAILURE() << spec().op << ": " << e.note << ": not a skiff error: " << err.what();
    }
  }
}

// ---- (f) every kernel against the reference kernel ----------------------------------------

/// One call_op of the spec's op, as a sample made it.
struct Call {
  const OpDef* op;
  Tensors inputs, outputs;
  Attrs attrs;
  bool inplace;
};

struct CallCapture : detail::OpObserver {
  std::string name;
  std::vector<Call> calls;
  void on_op(const OpDef& op, const Tensors& in, const Tensors& out, const Attrs& a, bool inplace) override {
    if (op.name == name) calls.push_back({&op, in, out, a, inplace});
  }
};

// Output buffers as call_op allocates them, filled with a sentinel so an element a
// kernel forgets to write shows up (NaN matches only NaN).
Tensor sentinel_like(const Tensor& t) {
  return full(t.shape(), is_differentiable(t.dtype()) ? NAN : 0x55, t.dtype());
}

// Runs kernel k on the call. An op that writes its inputs (adam_step, in-place calls)
// gets copies of them, and they join the outputs. Returns false if k declines.
bool run_kernel(const KernelEntry& k, const Call& c, Tensors& result) {
  const bool writes_inputs = c.inplace || c.outputs.empty();
  Tensors in = writes_inputs ? contiguous_copies(c.inputs) : c.inputs;
  Tensors out;
  for (const auto& o : c.outputs) out.push_back(sentinel_like(o));
  KernelContext ctx{in, out, c.attrs};
  if (k.supports && !k.supports(ctx)) return false;
  k.fn(ctx);
  result = out;
  if (writes_inputs) result.insert(result.end(), in.begin(), in.end());
  return true;
}

TEST_P(OpKernelTest, EveryKernelMatchesTheReferenceKernel) {
  const OpDef& def = op_def(spec().op);
  std::map<std::string, int> taken;  // backend -> calls it accepted
  const auto kernels = kernels_for(spec().op);
  for_each_sample([&](DType, const Sample& s) {
    CallCapture cap;
    cap.name = spec().op;
    detail::OpObserver* prev = detail::set_op_observer(&cap);
    s.run(s.inputs);
    detail::set_op_observer(prev);
    for (const Call& c : cap.calls) {
      const DType key = def.dispatch_input >= 0 && size_t(def.dispatch_input) < c.inputs.size()
                            ? c.inputs[size_t(def.dispatch_input)].dtype()
                            : c.outputs.at(0).dtype();
      const KernelEntry* ref = nullptr;
      for (const auto& k : kernels)
        if (k.backend == "cpu" && k.device == DeviceType::CPU && (k.dtypes & dtype_bit(key))) ref = &k;
      ASSERT_NE(ref, nullptr) << spec().op << ": no reference cpu kernel for " << dtype_name(key);
      Tensors want;
      ASSERT_TRUE(run_kernel(*ref, c, want)) << spec().op << ": the reference kernel declined a call";
      // call_op's own result (whichever kernel it picked) agrees with the reference kernel.
      if (!c.inplace && !c.outputs.empty()) {
        EXPECT_EQ(compare_all(c.outputs, Tensors(want.begin(), want.begin() + long(c.outputs.size())), 4 * s.tol_scale),
                  "")
            << spec().op << ": call_op's result differs from the cpu reference kernel's";
      }
      for (const auto& k : kernels) {
        if (&k == ref || k.device != DeviceType::CPU || !(k.dtypes & dtype_bit(key))) continue;
        Tensors got;
        if (!run_kernel(k, c, got)) continue;
        ++taken[k.backend];
        EXPECT_EQ(compare_all(got, want, 4 * s.tol_scale), "")
            << spec().op << ": kernel '" << k.backend << "' (priority " << k.priority
            << ") differs from the cpu reference kernel on attrs " << c.attrs.str();
      }
    }
  });
  // A fast kernel no sample reaches is not tested: the spec must have a sample it takes.
  for (const auto& k : kernels) {
    if (k.backend != "cpu" && k.device == DeviceType::CPU && !backend_disabled(k.backend)) {
      EXPECT_GT(taken[k.backend], 0) << spec().op << ": no sample reaches the '" << k.backend
                                     << "' kernel; add one its supports() accepts";
    }
  }
}

// ---- the dtypes a spec covers are the dtypes its kernel takes -----------------------------

TEST_P(OpKernelTest, CoversEveryKernelDtype) {
  std::set<DType> covered(spec().dtypes.begin(), spec().dtypes.end());
  covered.insert(spec().unreachable_dtypes.begin(), spec().unreachable_dtypes.end());
  for (const auto& k : kernels_for(spec().op)) {
    if (k.backend != "cpu") continue;
    for (int d = 0; d < kNumDTypes; ++d)
      if ((k.dtypes & dtype_bit(DType(d))) && !covered.count(DType(d)))
        ADD_FAILURE() << spec().op << ": the cpu kernel takes " << dtype_name(DType(d))
                      << " but the spec has no sample in it (or unreachable_dtypes entry)";
  }
}

const auto kOpName = [](const ::testing::TestParamInfo<std::string>& info) { return info.param; };
INSTANTIATE_TEST_SUITE_P(OpSpec, OpSpecTest, ::testing::ValuesIn(spec_names()), kOpName);
INSTANTIATE_TEST_SUITE_P(OpSpec, OpGradTest, ::testing::ValuesIn(spec_names([](auto& s) { return s.grad; })), kOpName);
INSTANTIATE_TEST_SUITE_P(OpSpec, OpGradGradTest, ::testing::ValuesIn(spec_names([](auto& s) { return s.gradgrad; })),
                         kOpName);
INSTANTIATE_TEST_SUITE_P(OpSpec, OpBackwardTest,
                         ::testing::ValuesIn(spec_names([](auto& s) { return !s.backward_of.empty(); })), kOpName);
INSTANTIATE_TEST_SUITE_P(OpSpec, OpErrorTest, ::testing::ValuesIn(spec_names([](auto& s) { return bool(s.errors); })),
                         kOpName);
INSTANTIATE_TEST_SUITE_P(OpSpec, OpKernelTest, ::testing::ValuesIn(spec_names(has_kernels)), kOpName);

}  // namespace
}  // namespace skiff::spec
