#include "framework/backends/onednn/engine.h"

#include <algorithm>
#include <cstdlib>

#include "framework/tensor/storage.h"

namespace skiff::onednn {

dnnl::engine& cpu_engine() {
  static dnnl::engine engine = [] {
    if (!std::getenv("DNNL_JIT_PROFILE")) dnnl::set_jit_profiling_flags(0);
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

void* Workspace::get(Slot slot, size_t bytes) {
  std::shared_ptr<Storage>& b = buffers_[slot];
  if (!b || size_t(b->nbytes()) < bytes) {
    b.reset();  // before the new allocation: the old block can be reused
    b = Storage::allocate(int64_t(std::max<size_t>(bytes, 64)), kCPU);
  }
  return b->data();
}

Workspace& thread_workspace() {
  thread_local Workspace ws;
  return ws;
}

}  // namespace skiff::onednn
