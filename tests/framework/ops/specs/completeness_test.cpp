// The spec table is complete (issue 18 item 7): every registered op has a spec, every
// spec names a registered op, and every differentiable op is gradchecked, itself or,
// for a backward op, through the forward whose gradient runs it. A failure lists the
// names, so a new op without a spec cannot land unnoticed.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "framework/ops/op.h"
#include "tests/framework/ops/specs/op_spec.h"

namespace skiff::spec {
namespace {

TEST(OpSpecTableTest, EveryRegisteredOpHasASpec) {
  std::string missing;
  for (const auto& name : registered_ops()) {
    bool found = std::any_of(spec_table().begin(), spec_table().end(), [&](const OpSpec& s) { return s.op == name; });
    if (!found) missing += " " + name;
  }
  EXPECT_EQ(missing, "") << "ops without a spec in tests/framework/ops/specs/:" << missing;
}

TEST(OpSpecTableTest, EverySpecNamesARegisteredOp) {
  const auto ops = registered_ops();
  const std::set<std::string> names(ops.begin(), ops.end());
  std::string stale;
  for (const auto& s : spec_table()) {
    if (!names.count(s.op)) stale += " " + s.op;
    if (!s.backward_of.empty() && !names.count(s.backward_of)) stale += " " + s.op + "->" + s.backward_of;
  }
  EXPECT_EQ(stale, "") << "specs naming no registered op:" << stale;
}

TEST(OpSpecTableTest, DifferentiableOpsAreGradchecked) {
  // An op with a backward is gradchecked itself or, as a backward op, through its forward.
  std::string missing;
  for (const auto& s : spec_table()) {
    const OpDef& def = op_def(s.op);
    if (def.backward && !s.grad && s.backward_of.empty() && s.no_grad.empty()) missing += " " + s.op;
  }
  EXPECT_EQ(missing, "") << "differentiable ops with no gradcheck (set grad, or no_grad with the reason):" << missing;
}

}  // namespace
}  // namespace skiff::spec
