#include "framework/backends/onednn/info.h"

#include <dnnl.h>
#include <fmt/format.h>

namespace skiff::onednn {

std::string describe() {
  const dnnl_version_t* v = dnnl_version();
  const char* isa = "unknown";
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: isa = "sse4.1"; break;
    case dnnl_cpu_isa_avx: isa = "avx"; break;
    case dnnl_cpu_isa_avx2: isa = "avx2"; break;
    case dnnl_cpu_isa_avx512_core: isa = "avx512_core"; break;
    case dnnl_cpu_isa_avx512_core_vnni: isa = "avx512_core_vnni"; break;
    case dnnl_cpu_isa_avx512_core_bf16: isa = "avx512_core_bf16"; break;
    case dnnl_cpu_isa_avx512_core_amx: isa = "avx512_core_amx"; break;
    case dnnl_cpu_isa_avx2_vnni: isa = "avx2_vnni"; break;
    default: break;
  }
  return fmt::format("oneDNN {}.{}.{} (OpenMP runtime, JIT isa {})", v->major, v->minor, v->patch, isa);
}

}  // namespace skiff::onednn
