// The spec table: filled by SKIFF_OP_SPEC lines in the <family>_specs.cpp files.
#include "tests/framework/ops/specs/op_spec.h"

#include <algorithm>
#include <map>

namespace skiff::spec {
namespace {

// A map keeps the table sorted by op name and refuses a second spec for an op.
std::map<std::string, OpSpec>& table() {
  static std::map<std::string, OpSpec> t;
  return t;
}

}  // namespace

bool register_spec(OpSpec spec) {
  SKIFF_CHECK(!table().count(spec.op), "op spec table: a second spec for '{}'", spec.op);
  std::string name = spec.op;
  table().emplace(std::move(name), std::move(spec));
  return true;
}

const std::vector<OpSpec>& spec_table() {
  // Built on first use, after every static registration ran.
  static const std::vector<OpSpec> all = [] {
    std::vector<OpSpec> v;
    for (const auto& [name, s] : table()) v.push_back(s);
    return v;
  }();
  return all;
}

const OpSpec& spec_for(const std::string& op) {
  auto it = table().find(op);
  SKIFF_CHECK(it != table().end(), "op spec table: no spec for '{}'", op);
  return it->second;
}

}  // namespace skiff::spec
