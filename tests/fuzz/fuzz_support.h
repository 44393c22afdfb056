#pragma once
/// \file fuzz_support.h
/// What every harness in tests/fuzz shares.
///
/// A harness feeds one input to one reader of user files. The contract it checks is the
/// one the skiff command relies on: a reader either succeeds or throws a skiff::Error
/// (which the command turns into a clear message and an exit code). Anything else
/// escaping a reader (a std::out_of_range, a YAML or JSON library exception, bad_alloc)
/// is a finding, as are the sanitizers' reports and libFuzzer's timeouts and
/// out-of-memory stops.
///
/// Readers that take paths get the input through files in a scratch directory private to
/// the process. Harnesses that need several files (a config and its _BASE_, a TF.js
/// model.json and its weights) split the input at kPartSeparator.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "framework/core/error.h"

namespace skiff::fuzz {

/// Separates the files of a multi-file input; it is in every text harness's dictionary.
inline constexpr std::string_view kPartSeparator = "\n--skiff-fuzz-part--\n";

/// A directory only this process uses (under $TMPDIR, else /dev/shm when it exists, else
/// /tmp), created on first use and removed at exit.
const std::filesystem::path& scratch_dir();

/// Writes `bytes` to scratch_dir() / name (parent directories created) and returns the path.
std::filesystem::path write_scratch_file(const std::string& name, std::string_view bytes);

/// Removes scratch_dir() / name and everything below it.
void remove_scratch(const std::string& name);

/// The input as text.
inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// `text` split at kPartSeparator into exactly `n` parts: missing parts are empty, and
/// the last part keeps any further separators.
std::vector<std::string_view> split_parts(std::string_view text, size_t n);

/// Reports an exception that is not a skiff::Error and aborts, so libFuzzer keeps the input.
[[noreturn]] void report_foreign_exception(const char* harness, const char* type, const char* what);

/// Runs `read`; a skiff::Error is an accepted refusal, anything else aborts (see the file comment).
template <typename F>
void expect_clean_errors(const char* harness, F&& read) {
  try {
    read();
  } catch (const skiff::Error&) {
    // The reader refused the input with a message: what it must do.
  } catch (const std::exception& e) {
    report_foreign_exception(harness, typeid(e).name(), e.what());
  } catch (...) {
    report_foreign_exception(harness, "(not a std::exception)", "");
  }
}

}  // namespace skiff::fuzz

/// libFuzzer's entry points: every harness defines the first, some the second (once, before
/// any input). replay_main.cpp calls them in builds without libFuzzer.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);
