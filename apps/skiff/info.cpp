// `skiff info`: what this build is and what it will use on this machine.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <thread>

#include "apps/skiff/commands.h"
#include "framework/core/cpu_features.h"
#include "framework/core/threading.h"
#include "framework/ops/op.h"
#include "skiff/build_info.h"
#if SKIFF_WITH_ONEDNN
#include "framework/backends/onednn/info.h"
#endif

namespace skiff::app {

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Show version, build, CPU features, threads and compiled-in backends");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print as JSON");
  cmd->callback([json] {
    const CpuFeatures& f = cpu_features();
    std::vector<std::string> feats;
    auto add = [&](bool on, const char* n) { if (on) feats.emplace_back(n); };
    add(f.sse42, "sse4.2"); add(f.avx, "avx"); add(f.avx2, "avx2"); add(f.fma, "fma"); add(f.f16c, "f16c");
    add(f.avx512f, "avx512f"); add(f.avx512bw, "avx512bw"); add(f.avx512vl, "avx512vl");
    add(f.avx512_vnni, "avx512_vnni"); add(f.avx512_bf16, "avx512_bf16");
#if SKIFF_WITH_ONEDNN
    std::string onednn = backend_disabled("onednn") ? "built, disabled by SKIFF_DISABLE_BACKENDS (" + onednn::describe() + ")"
                                                    : onednn::describe();
#else
    std::string onednn = "not built";
#endif
    std::string cuda = SKIFF_HAVE_CUDA ? "built" : "not built (no CUDA toolkit found at configure time)";
    if (*json) {
      nlohmann::json j{{"version", SKIFF_VERSION}, {"build_type", SKIFF_BUILD_TYPE}, {"compiler", SKIFF_COMPILER},
                       {"cpu", f.brand}, {"cpu_features", feats}, {"kernel_isa", isa_name(active_isa())},
                       {"threads", num_threads()}, {"cores", std::thread::hardware_concurrency()},
                       {"backends", {{"cpu", "built"}, {"onednn", onednn}, {"cuda", cuda}}},
                       {"ops", registered_ops().size()}, {"sanitizers", bool(SKIFF_SANITIZE)}};
      fmt::print("{}\n", j.dump(2));
      return;
    }
    fmt::print("skiff {}\n", SKIFF_VERSION);
    fmt::print("  build:        {} ({}){}\n", SKIFF_BUILD_TYPE, SKIFF_COMPILER, SKIFF_SANITIZE ? ", ASan+UBSan" : "");
    fmt::print("  cpu:          {}\n", f.brand.empty() ? "unknown" : f.brand);
    fmt::print("  cpu features: {}\n", fmt::join(feats, " "));
    fmt::print("  kernel isa:   {} (set SKIFF_CPU_ISA to lower it)\n", isa_name(active_isa()));
    fmt::print("  threads:      {} of {} cores (SKIFF_NUM_THREADS or --threads)\n", num_threads(),
               std::thread::hardware_concurrency());
    fmt::print("  backends:     cpu: built\n");
    fmt::print("                onednn: {}\n", onednn);
    fmt::print("                cuda: {}\n", cuda);
    fmt::print("  ops:          {} registered\n", registered_ops().size());
  });
}

}  // namespace skiff::app
