#include "framework/backends/onednn/engine.h"

#include <cstdlib>

namespace skiff::onednn {

dnnl::engine& cpu_engine() {
  static dnnl::engine engine = [] {
    if (!std::getenv("DNNL_JIT_PROFILE")) dnnl::set_jit_profiling_flags(0);
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

}  // namespace skiff::onednn
