#pragma once
/// \file error.h
/// The skiff error hierarchy and the checking macros.
///
/// Library code reports problems by throwing a subclass of skiff::Error; only
/// the CLI catches them (it maps each type to an exit code). Messages follow
/// "<component>: expected <...>, got <...>" and always print shapes and dtypes.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace skiff {

/// Exit codes of the skiff command (the table in README.md, "Exit codes").
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,         ///< nothing found (zoo search), or an unexpected error
  kExitBadInput = 2,        ///< command line, recipe, image or model file is wrong
  kExitNotImplemented = 3,  ///< an op or feature skiff does not have
  kExitDevice = 4,
  kExitIo = 5,              ///< download, cache, file not readable / writable
  kExitDistributed = 6,     ///< distributed run: a peer failed or did not answer in time
  kExitInternal = 70,       ///< a bug in skiff (EX_SOFTWARE)
  kExitInterrupted = 130,   ///< Ctrl-C (training saves a checkpoint first)
};

/// Where an error was raised. std::source_location does the same, but libstdc++ 12
/// offers it only to compilers with __builtin_source_location, which clang 14 (the
/// fuzzing build, tests/fuzz) lacks; the three builtins below exist in GCC and clang.
class SourceLocation {
 public:
  static constexpr SourceLocation current(const char* file = __builtin_FILE(), uint32_t line = __builtin_LINE(),
                                          const char* function = __builtin_FUNCTION()) noexcept {
    return SourceLocation(file, line, function);
  }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr uint32_t line() const noexcept { return line_; }
  constexpr const char* function_name() const noexcept { return function_; }

 private:
  constexpr SourceLocation(const char* file, uint32_t line, const char* function) noexcept
      : file_(file), line_(line), function_(function) {}
  const char* file_;
  uint32_t line_;
  const char* function_;
};

/// Base of every error skiff throws. Carries where it was raised and a stack of
/// context lines added as the error crosses module boundaries.
class Error : public std::runtime_error {
 public:
  Error(std::string msg, SourceLocation loc = SourceLocation::current());
  /// Adds a line of context ("while running node conv_3", "in key Train.loader").
  void add_context(std::string ctx) { context_.push_back(std::move(ctx)); }
  const std::vector<std::string>& context() const { return context_; }
  const SourceLocation& location() const { return loc_; }
  /// Message plus context lines, one per line.
  std::string full_message() const;
  /// Short type name for reports ("ShapeError").
  virtual const char* kind() const { return "Error"; }
  /// Process exit code the CLI uses for this kind of error.
  virtual int exit_code() const { return kExitFailure; }

 private:
  SourceLocation loc_;
  std::vector<std::string> context_;
};

#define SKIFF_DEFINE_ERROR(Name, Code)                                                   \
  class Name : public Error {                                                            \
   public:                                                                               \
    using Error::Error;                                                                  \
    const char* kind() const override { return #Name; }                                  \
    int exit_code() const override { return Code; }                                      \
  };

SKIFF_DEFINE_ERROR(ValueError, kExitBadInput)
SKIFF_DEFINE_ERROR(TypeError, kExitBadInput)
SKIFF_DEFINE_ERROR(ShapeError, kExitBadInput)
SKIFF_DEFINE_ERROR(IndexError, kExitBadInput)
SKIFF_DEFINE_ERROR(NotImplementedError, kExitNotImplemented)
SKIFF_DEFINE_ERROR(DeviceError, kExitDevice)
SKIFF_DEFINE_ERROR(ConfigError, kExitBadInput)
SKIFF_DEFINE_ERROR(IoError, kExitIo)
SKIFF_DEFINE_ERROR(DistributedError, kExitDistributed)
SKIFF_DEFINE_ERROR(InternalError, kExitInternal)
#undef SKIFF_DEFINE_ERROR

namespace detail {
template <typename E, typename... Args>
[[noreturn]] void throw_error(SourceLocation loc, fmt::format_string<Args...> f, Args&&... args) {
  throw E(fmt::format(f, std::forward<Args>(args)...), loc);
}
[[noreturn]] inline void throw_error_plain(SourceLocation loc, const char* cond) {
  throw ValueError(fmt::format("check failed: {}", cond), loc);
}
}  // namespace detail

}  // namespace skiff

/// User-facing check: throws ErrorType with a formatted message when cond is false.
#define SKIFF_CHECK_T(ErrorType, cond, ...)                                                   \
  do {                                                                                       \
    if (!(cond)) [[unlikely]]                                                                \
      ::skiff::detail::throw_error<ErrorType>(::skiff::SourceLocation::current(), __VA_ARGS__); \
  } while (0)
#define SKIFF_CHECK(cond, ...) SKIFF_CHECK_T(::skiff::ValueError, cond, __VA_ARGS__)
#define SKIFF_CHECK_SHAPE(cond, ...) SKIFF_CHECK_T(::skiff::ShapeError, cond, __VA_ARGS__)
#define SKIFF_CHECK_DTYPE(cond, ...) SKIFF_CHECK_T(::skiff::TypeError, cond, __VA_ARGS__)
#define SKIFF_CHECK_INDEX(cond, ...) SKIFF_CHECK_T(::skiff::IndexError, cond, __VA_ARGS__)
/// Internal invariant: failing it is a bug in skiff, not in the caller's input.
#define SKIFF_ASSERT(cond, ...)                                                              \
  do {                                                                                       \
    if (!(cond)) [[unlikely]]                                                                \
      ::skiff::detail::throw_error<::skiff::InternalError>(                                  \
          ::skiff::SourceLocation::current(), "internal error (this is a bug in skiff): {}: {}", \
          #cond, fmt::format(__VA_ARGS__));                                                  \
  } while (0)
/// Throws the given error type unconditionally.
#define SKIFF_THROW(ErrorType, ...) \
  ::skiff::detail::throw_error<ErrorType>(::skiff::SourceLocation::current(), __VA_ARGS__)
