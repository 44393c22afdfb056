#pragma once
/// \file lines.h
/// Walking the lines of a vocabulary or merges file held in memory.
#include <cstddef>
#include <string_view>

namespace skiff::text {

/// Calls fn(line, line_number) for each line of `text` (numbered from 1), without its
/// "\n" or "\r\n"; a final line without "\n" counts, the empty rest after a last "\n" does not.
template <class Fn>
void for_each_line(std::string_view text, Fn fn) {
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(line, ++line_no);
  }
}

}  // namespace skiff::text
