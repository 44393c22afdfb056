#pragma once
/// \file engine.h
/// The one oneDNN CPU engine the backend's kernels share.

#include <dnnl.hpp>

namespace skiff::onednn {

/// Created on first use. Before that, oneDNN's JIT profiling hooks (VTune/ITT
/// and perf map registration of every generated kernel) are switched off unless
/// the user asked for them with DNNL_JIT_PROFILE: with image shapes changing
/// from call to call, kernels are generated often, and the hooks cost about 4% of
/// a whole `skiff ocr` run.
dnnl::engine& cpu_engine();

}  // namespace skiff::onednn
