#include "framework/core/error.h"

namespace skiff {

Error::Error(std::string msg, SourceLocation loc) : std::runtime_error(std::move(msg)), loc_(loc) {}

std::string Error::full_message() const {
  std::string out = what();
  for (const auto& c : context_) out += "\n  " + c;
  return out;
}

}  // namespace skiff
