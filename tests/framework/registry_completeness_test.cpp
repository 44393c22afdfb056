// Every registered op can run on the CPU: it is a view op or has a CPU kernel,
// and every kernel belongs to a registered op (no orphans from typos). Every op
// has an ONNX lowering or says why it cannot be exported.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "framework/graph/lowering.h"
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
  const auto kernels = registered_kernels();
  const auto ops = registered_ops();
  const std::set<std::string> op_names(ops.begin(), ops.end());
  // The table is the real one: every op's kernels_for() rows appear in it.
  size_t via_ops = 0;
  for (const auto& name : ops) via_ops += kernels_for(name).size();
  ASSERT_GE(kernels.size(), via_ops);
  ASSERT_GT(via_ops, 100u);
  for (const auto& k : kernels) {
    std::string types;
    for (int d = 0; d < kNumDTypes; ++d)
      if (k.entry.dtypes & dtype_bit(DType(d))) types += (types.empty() ? "" : ",") + std::string(dtype_name(DType(d)));
    EXPECT_TRUE(op_names.count(k.op))
        << "kernel registered under '" << k.op << "' (backend " << k.entry.backend << ", device "
        << Device{k.entry.device, 0}.str() << ", dtypes " << types << ") belongs to no registered op";
    EXPECT_NE(k.entry.fn, nullptr) << k.op << " (" << k.entry.backend << ")";
    EXPECT_NE(k.entry.dtypes, 0u) << k.op << " (" << k.entry.backend << ") supports no dtype";
  }
  EXPECT_THROW(op_def("not_an_op"), NotImplementedError);
}

TEST(RegistryCompletenessTest, EveryOpHasAnOnnxLoweringOrIsMarkedNotExportable) {
  const auto& table = graph::lowerings();
  const auto ops = registered_ops();
  for (const auto& name : ops) {
    if (!table.contains(name)) {
      ADD_FAILURE() << "op '" << name << "' has neither an ONNX lowering (SKIFF_REGISTER_LOWERING) nor a "
                    << "SKIFF_NOT_EXPORTABLE mark; see framework/graph/lowering.h";
      continue;
    }
    // The reason is the whole error message: it must say which op failed.
    const graph::Lowering& l = table.get(name);
    if (!l.fn) {
      EXPECT_NE(l.not_exportable.find(name), std::string::npos) << name << ": " << l.not_exportable;
    }
  }
  const std::set<std::string> op_names(ops.begin(), ops.end());
  for (const auto& name : table.names())
    EXPECT_TRUE(op_names.count(name)) << "lowering registered under '" << name << "' belongs to no registered op";
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
