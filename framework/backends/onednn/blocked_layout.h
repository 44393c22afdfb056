#pragma once
/// \file blocked_layout.h
/// NCHW <-> nChw16c ([N, ceil(C / 16), H, W, 16], channel tail zero-padded) for float32
/// activations as plain loops. oneDNN JIT-compiles a reorder kernel for every shape it
/// sees; with images of new sizes, `skiff ocr` over 40 images generated about 1300 of them
/// (each an mmap, two mprotects and an munmap, which with 2 threads also interrupt the
/// other core), for a copy that is memory-bound either way.

#include <cstdint>

#include <dnnl.hpp>

#include "framework/core/cpu_features.h"

namespace skiff::onednn {

/// Which of the two loops converts `from` into `to`: Block (nchw -> nChw16c), Unblock
/// (nChw16c -> nchw), or None when the pair is anything else (then use a dnnl::reorder).
enum class BlockedReorder { None, Block, Unblock };
BlockedReorder blocked_reorder_kind(const dnnl::memory::desc& from, const dnnl::memory::desc& to);

/// Runs `kind` (not None) on dense buffers; dims are the logical [n, c, h, w]. The loops are
/// compiled per ISA (16 x 16 register transposes on AVX2 and AVX-512); `isa` picks one
/// (tests ask for each the CPU has).
void run_blocked_reorder(BlockedReorder kind, const float* from, float* to, const dnnl::memory::dims& dims,
                         CpuIsa isa = active_isa());

}  // namespace skiff::onednn
