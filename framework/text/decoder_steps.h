#pragma once
/// \file decoder_steps.h
/// The decoders of a Hugging Face tokenizer.json other than byte-level BPE's: they turn
/// a list of token strings back into text, one step after another, as the reference
/// (@lenml/tokenizers, a port of transformers.js) does:
///   - Replace: every match of a literal or regex in each token becomes `content`;
///   - ByteFallback: each run of <0xNN> tokens becomes the text of those bytes (each
///     ill-formed sequence one U+FFFD, as the WHATWG TextDecoder);
///   - Fuse: all tokens become one;
///   - Strip: removes up to `start` leading and `stop` trailing `content` characters from each token;
///   - WordPiece: a token after the first loses its `prefix` ("##") or gains a leading
///     space; with `cleanup`, " ." -> ".", " n't" -> "n't" and the like (clean_up_tokenization);
///   - Metaspace: `replacement` becomes a space; the first token loses a leading space
///     when the pre-tokenizer prepends one.
/// decode() of the tokenizer joins what is left.

#include <memory>
#include <string>
#include <vector>

#include "framework/text/split_regex.h"

namespace skiff::text {

/// One decoding step (tokenizer.json `decoder`, flattened out of Sequence).
struct DecoderSpec {
  enum class Kind { Replace, ByteFallback, Fuse, Strip, WordPiece, Metaspace };
  Kind kind = Kind::Fuse;
  std::shared_ptr<const SplitRegex> pattern{};  ///< Replace
  std::string content{};     ///< Replace: the replacement; Strip: the character; Metaspace: replacement
  uint32_t start = 0, stop = 0;  ///< Strip
  std::string prefix = "##";     ///< WordPiece
  bool cleanup = true;           ///< WordPiece
  bool strip_first_space = true; ///< Metaspace
};

/// Applies `step` to `tokens` in place.
void apply_decoder(const DecoderSpec& step, std::vector<std::string>& tokens);

/// transformers.js's clean_up_tokenization: " ." -> ".", " ?" -> "?", " !" -> "!",
/// " ," -> ",", " ' " -> "'", " n't" -> "n't", " 'm" -> "'m", " 's" -> "'s",
/// " 've" -> "'ve", " 're" -> "'re", each over the whole text, in that order.
std::string clean_up_tokenization(std::string text);

}  // namespace skiff::text
