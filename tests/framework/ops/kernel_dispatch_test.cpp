// Kernel selection: the highest-priority kernel that supports the dtype and accepts
// the call (KernelEntry::supports) runs; one that declines falls through to the next.
#include <gtest/gtest.h>

#include "framework/ops/op.h"
#include "framework/ops/ops.h"

namespace skiff {
namespace {

std::vector<TensorMeta> same_as_input(const std::vector<Tensor>& in, const Attrs&) {
  return {{in[0].shape(), in[0].dtype()}};
}

// The reference kernel writes 1, the fast one 2; the fast one takes only inputs of
// at most 4 elements.
void fill(const Tensor& t, float v) {
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = v;
}
void reference_kernel(const KernelContext& c) { fill(c.outputs[0], 1.0f); }
void fast_kernel(const KernelContext& c) { fill(c.outputs[0], 2.0f); }
bool fast_takes(const KernelContext& c) { return c.inputs[0].numel() <= 4; }
bool never(const KernelContext&) { return false; }

const OpDef kDispatchProbe{.name = "test_dispatch_probe", .infer = same_as_input};
SKIFF_REGISTER_OP(kDispatchProbe);
SKIFF_REGISTER_KERNEL(test_dispatch_probe, CPU, "cpu", dtype_bit(DType::Float32), 0, reference_kernel);
SKIFF_REGISTER_KERNEL_IF(test_dispatch_probe, CPU, "fast", dtype_bit(DType::Float32), 10, fast_kernel, fast_takes);

const OpDef kAllDecline{.name = "test_all_decline", .infer = same_as_input};
SKIFF_REGISTER_OP(kAllDecline);
SKIFF_REGISTER_KERNEL_IF(test_all_decline, CPU, "fast", dtype_bit(DType::Float32), 10, fast_kernel, never);

double first(const Tensor& t) { return to(t, DType::Float64).to_vector<double>()[0]; }

TEST(KernelDispatch, ADecliningKernelFallsThroughToTheNext) {
  EXPECT_EQ(first(call_op1(kDispatchProbe, {zeros({4})})), 2.0);  // the fast kernel takes it
  EXPECT_EQ(first(call_op1(kDispatchProbe, {zeros({5})})), 1.0);  // declined: the reference runs
  Tensor target = zeros({6});
  call_op_inplace(kDispatchProbe, target, {target});
  EXPECT_EQ(first(target), 1.0);  // in-place calls choose the same way
}

TEST(KernelDispatch, WhenEveryKernelDeclinesTheErrorSaysSo) {
  try {
    call_op1(kAllDecline, {zeros({2})});
    FAIL() << "no error";
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("test_all_decline: no kernel for dtype float32 on cpu takes this call"),
              std::string::npos)
        << e.what();
  }
}

TEST(KernelDispatch, ShapeRuleErrorsNameTheOp) {
  // Broadcasting is one rule shared by every binary op: the error gets the op as context.
  try {
    mul(zeros({2, 3}), zeros({4}));
    FAIL() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_NE(e.full_message().find("[2, 3] and [4]"), std::string::npos) << e.full_message();
    EXPECT_NE(e.full_message().find("in op 'mul'"), std::string::npos) << e.full_message();
  }
  // A rule that names its op already is left as it is.
  try {
    conv2d(zeros({1, 3, 5, 5}), zeros({2, 2, 3, 3}));
    FAIL() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("conv2d:", 0), 0u) << e.what();
    EXPECT_TRUE(e.context().empty()) << e.full_message();
  }
}

}  // namespace
}  // namespace skiff
