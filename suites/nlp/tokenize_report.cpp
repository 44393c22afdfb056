#include "suites/nlp/tokenize_report.h"

#include <fmt/format.h>

#include "framework/text/unicode.h"

namespace skiff::nlp {

std::string ids_line(const text::Encoding& encoding) {
  return fmt::format("{}\n", fmt::join(encoding.ids, " "));
}

std::string escape_piece(std::string_view piece) {
  std::string out;
  // A token can hold part of a multi-byte character: escape the bytes of any stretch
  // that is not valid UTF-8 on its own.
  for (size_t pos = 0; pos < piece.size();) {
    size_t bad = text::find_invalid_utf8(piece.substr(pos));
    std::string_view good = piece.substr(pos, bad == std::string_view::npos ? piece.size() - pos : bad);
    for (char c : good) {
      switch (c) {
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\\': out += "\\\\"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) out += fmt::format("\\x{:02X}", unsigned(c));
          else out += c;
      }
    }
    pos += good.size();
    if (pos < piece.size()) out += fmt::format("\\x{:02X}", unsigned(static_cast<unsigned char>(piece[pos++])));
  }
  return out;
}

std::string token_table(const text::Encoding& encoding, std::string_view input) {
  std::string out;
  for (size_t k = 0; k < encoding.ids.size(); ++k) {
    const text::Span& s = encoding.offsets[k];
    out += fmt::format("{}\t{}:{}\t{}\n", encoding.ids[k], s.begin, s.end,
                       escape_piece(input.substr(s.begin, s.end - s.begin)));
  }
  return out;
}

nlohmann::json tokenize_json(const text::Tokenizer& tokenizer, const text::Encoding& encoding,
                             std::string_view name) {
  nlohmann::json offsets = nlohmann::json::array(), tokens = nlohmann::json::array();
  for (size_t k = 0; k < encoding.ids.size(); ++k) {
    offsets.push_back({encoding.offsets[k].begin, encoding.offsets[k].end});
    tokens.push_back(tokenizer.id_to_token(encoding.ids[k]));
  }
  return {{"input", std::string(name)}, {"count", encoding.ids.size()}, {"ids", encoding.ids},
          {"offsets", std::move(offsets)}, {"tokens", std::move(tokens)}};
}

}  // namespace skiff::nlp
