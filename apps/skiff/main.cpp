// The `skiff` executable: parses the command line, runs one subcommand, and maps
// errors to exit codes. Results go to stdout, logs and errors to stderr.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "apps/skiff/commands.h"
#include "framework/cli/command_registry.h"
#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "skiff/build_info.h"

namespace {

/// glibc maps every allocation above 128 KiB afresh and unmaps it on free, until a large
/// free raises that threshold on its own. A decoded image, its resized copy and a
/// reorder buffer per image then fault in fresh pages for every image of a folder.
/// Keeping blocks up to 16 MiB in the heap (and trimming only above 64 MiB free)
/// reuses them: `skiff ocr` over 40 mixed images, 99k -> 78k page faults. Tensors
/// have their own cache (framework/tensor/cpu_allocator.h). Settings in
/// GLIBC_TUNABLES win, as the user asked for them.
void tune_malloc() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::string_view(tunables).find("glibc.malloc.") != std::string_view::npos) return;
  mallopt(M_MMAP_THRESHOLD, 16 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  tune_malloc();
  CLI::App app{"skiff: a deep-learning toolkit (framework core, OCR and other task suites)", "skiff"};
  app.set_version_flag("--version", std::string("skiff ") + SKIFF_VERSION);
  app.require_subcommand(1);
  bool verbose = false;
  int threads = 0;
  app.add_flag("-v,--verbose", verbose, "Print error context and locations");
  app.add_option("--threads", threads, "Number of CPU threads (default: SKIFF_NUM_THREADS or all cores)")
      ->check(CLI::PositiveNumber);
  app.parse_complete_callback([&] {
    if (threads > 0) skiff::set_num_threads(threads);
  });
  skiff::app::add_info_command(app);
  skiff::app::add_bench_command(app);
  skiff::app::add_zoo_command(app);
  skiff::app::add_graph_command(app);
  // The suites' commands (skiff ocr, skiff sci, skiff bench ocr, ...), registered by the suites linked in.
  skiff::cli::add_registered_commands(app);
  skiff::app::add_config_command(app);
  skiff::app::add_train_commands(app);
  skiff::app::add_serve_command(app);
  skiff::app::add_launch_command(app);

  try {
    skiff::app::check_command_words(app, argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's chosen exit code, already reported (zoo search: 1, ocr: 2)
  } catch (const CLI::ParseError& e) {
    // app.exit prints the help, the version or the error. CLI11's own error codes
    // (105, 109, ...) are not skiff's: every command-line mistake is bad input.
    int code = app.exit(e);
    return code == 0 ? skiff::kExitOk : skiff::kExitBadInput;
  } catch (const skiff::Error& e) {
    // Context lines ("while running node ...") say where the error happened: always print them.
    std::fprintf(stderr, "skiff: %s: %s\n", e.kind(), e.full_message().c_str());
    if (verbose)
      std::fprintf(stderr, "  raised at %s:%u\n", e.location().file_name(), unsigned(e.location().line()));
    return e.exit_code();
  } catch (const std::filesystem::filesystem_error& e) {
    std::fprintf(stderr, "skiff: I/O error: %s\n", e.what());
    return skiff::kExitIo;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "skiff: error: %s\n", e.what());
    return skiff::kExitFailure;
  }
  return skiff::kExitOk;
}
