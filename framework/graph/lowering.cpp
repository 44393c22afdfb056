// The lowering registry and the parts of LoweringContext that are not the tracer's.
#include "framework/graph/lowering.h"

#include <algorithm>

namespace skiff::graph {

DimFlags broadcast_flags(const std::vector<DimFlags>& in, size_t rank) {
  DimFlags out(rank, kStatic);
  for (const auto& f : in)
    for (size_t d = 0; d < f.size(); ++d) {
      uint8_t& o = out[rank - f.size() + d];
      o = std::max(o, f[d]);
    }
  return out;
}

void LoweringContext::set_output(size_t i, std::string value, DimFlags flags) {
  const auto rank = size_t(output(i).dim());
  out_.at(i) = std::move(value);
  out_flags_.at(i) = flags.size() == rank ? std::move(flags) : DimFlags(rank, kStatic);
}

void LoweringContext::begin(const OpDef& op, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                            const Attrs& attrs, std::vector<std::string> values, std::vector<DimFlags> flags) {
  op_ = &op;
  inputs_ = &inputs;
  outputs_ = &outputs;
  attrs_ = &attrs;
  values_ = std::move(values);
  flags_ = std::move(flags);
  out_.assign(outputs.size(), "");
  out_flags_.assign(outputs.size(), {});
  why_not_.assign(outputs.size(), "");
}

Registry<Lowering>& lowerings() {
  static Registry<Lowering> registry("onnx lowering");
  return registry;
}

}  // namespace skiff::graph
