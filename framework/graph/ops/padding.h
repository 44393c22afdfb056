#pragma once
/// \file padding.h
/// The spatial padding of an ONNX conv or pool node, from its `pads` and
/// `auto_pad` attributes: one rule for every graph op that needs it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace skiff::graph::ops {

/// Padding before and after each spatial dim.
struct Padding {
  std::vector<int64_t> begin, end;
  bool symmetric() const { return begin == end; }
};

/// Resolves ONNX padding for inputs of spatial size `in`:
///   NOTSET      `pads` as given: [begin..., end...] (all zeros when empty)
///   VALID       no padding
///   SAME_UPPER  output = ceil(in / stride); the odd pixel of padding goes at the end
///   SAME_LOWER  the same with the odd pixel at the start
/// The window's extent is dilation * (kernel - 1) + 1. Returns nullopt when
/// `pads` has the wrong length or `auto_pad` is none of these.
std::optional<Padding> resolve_padding(const std::string& auto_pad, const std::vector<int64_t>& pads,
                                       const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                                       const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations);

}  // namespace skiff::graph::ops
