#pragma once
/// \file info.h
/// oneDNN backend: version and ISA report for `skiff info`.

#include <string>

namespace skiff::onednn {

/// "oneDNN 2.6.3 (cpu runtime: OpenMP, isa: avx2)"-style description.
std::string describe();

}  // namespace skiff::onednn
