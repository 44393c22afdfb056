#pragma once
/// \file tokenize_report.h
/// What `skiff nlp tokenize` prints for one input: token ids, and for each token its
/// byte range in the input and its text (the input bytes it covers), as plain text
/// or as JSON.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "framework/text/tokenizer.h"

namespace skiff::nlp {

/// The ids, space-separated, on one line (with a trailing newline).
std::string ids_line(const text::Encoding& encoding);

/// One line per token: `id<TAB>begin:end<TAB>piece`, where `piece` is the input text the
/// token covers, with control characters, backslashes and bytes of a split character
/// escaped (\n, \t, \\, \xHH) so each token stays on its line.
std::string token_table(const text::Encoding& encoding, std::string_view input);

/// {"input": name, "count": n, "ids": [...], "offsets": [[begin, end], ...],
///  "tokens": [token strings as the tokenizer files spell them]}.
nlohmann::json tokenize_json(const text::Tokenizer& tokenizer, const text::Encoding& encoding,
                             std::string_view name);

/// `text` with the escapes of token_table().
std::string escape_piece(std::string_view text);

}  // namespace skiff::nlp
