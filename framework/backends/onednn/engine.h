#pragma once
/// \file engine.h
/// What the backend's oneDNN kernels share: the one CPU engine, and per thread a
/// stream and a workspace for reordered tensors and scratchpads.

#include <array>
#include <cstddef>
#include <memory>

#include <dnnl.hpp>

namespace skiff {
class Storage;
}

namespace skiff::onednn {

/// Created on first use. Before that, oneDNN's JIT profiling hooks (VTune/ITT
/// and perf map registration of every generated kernel) are switched off unless
/// the user asked for them with DNNL_JIT_PROFILE: with image shapes changing
/// from call to call, kernels are generated often, and the hooks cost about 4% of
/// a whole `skiff ocr` run.
dnnl::engine& cpu_engine();

/// This thread's stream on cpu_engine().
dnnl::stream& thread_stream();

/// Grow-only, 64-byte aligned buffers, one set per thread, for the memory a primitive
/// needs only while it runs: reordered copies of its arguments and its scratchpads.
/// One set serves every kernel of the backend (they do not nest), so a process holds
/// the largest need of any one call rather than the sum over kernel kinds.
class Workspace {
 public:
  /// Slots: which buffer a kernel wants. Two different slots never alias.
  enum Slot : size_t { Src, Weights, Dst, Scratchpad, ReorderScratchpad, Residual, kSlots };

  /// A buffer of at least `bytes` for `slot`, valid until the next get() of that slot.
  /// From the tensor allocator (framework/tensor/cpu_allocator.h): a buffer outgrown by a
  /// larger image goes back to its cache for the next tensor, and a larger one comes from
  /// memory already touched rather than fresh pages from the system.
  /// \throws DeviceError when the allocation fails.
  void* get(Slot slot, size_t bytes);

 private:
  std::array<std::shared_ptr<Storage>, kSlots> buffers_;
};

/// This thread's workspace.
Workspace& thread_workspace();

}  // namespace skiff::onednn
