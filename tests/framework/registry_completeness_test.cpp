// Every registered op can run on the CPU: it is a view op or has a CPU kernel,
// and every kernel belongs to a registered op (no orphans from typos).
#include <gtest/gtest.h>

#include "framework/ops/op.h"

namespace skiff {

TEST(RegistryCompletenessTest, EveryOpHasACpuKernelOrIsAView) {
  for (const auto& name : registered_ops()) {
    const OpDef& def = op_def(name);
    if (def.view) continue;
    bool has_cpu = false;
    for (const auto& k : kernels_for(name)) has_cpu |= k.device == DeviceType::CPU && k.backend == "cpu";
    EXPECT_TRUE(has_cpu) << "op '" << name << "' has no reference cpu kernel";
  }
}

TEST(RegistryCompletenessTest, EveryKernelBelongsToAnOp) {
  for (const auto& name : registered_ops()) EXPECT_NO_THROW(op_def(name));
  EXPECT_THROW(op_def("not_an_op"), NotImplementedError);
}

TEST(RegistryCompletenessTest, MissingKernelErrorListsRegisteredOnes) {
  try {
    find_kernel("add", Device{DeviceType::CUDA, 0}, DType::Float32);
    FAIL();
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("cpu"), std::string::npos) << e.what();
  }
}

}  // namespace skiff
