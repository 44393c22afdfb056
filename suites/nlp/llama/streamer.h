#pragma once
/// \file streamer.h
/// Printing generated text as tokens arrive. A byte-level BPE token may end in the
/// middle of a multi-byte UTF-8 character ("é" = C3 A9 split over two tokens), so the
/// streamers hold back an incomplete trailing character until the bytes that finish it
/// arrive, and emit only complete characters. Ill-formed bytes become U+FFFD exactly as
/// BpeTokenizer::decode() makes them: the concatenation of everything a streamer emits
/// (flush() included) equals decode() of all the tokens.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <vector>

#include "framework/text/bpe_tokenizer.h"

namespace skiff::nlp {

/// Bytes in, complete UTF-8 characters out.
class Utf8Streamer {
 public:
  /// Appends `bytes` and returns the text that is now complete (possibly empty).
  std::string push(std::string_view bytes);
  /// Returns what is held back (an unfinished character becomes U+FFFD) and resets.
  std::string flush();
  /// Bytes held back (at most 3).
  size_t pending() const { return pending_.size(); }

 private:
  std::string pending_;
};

/// Token ids in, text out, for one sequence.
class TokenStreamer {
 public:
  /// `tokenizer` must outlive the streamer. With skip_special_tokens, special added
  /// tokens (eos, ...) print nothing.
  explicit TokenStreamer(const text::BpeTokenizer& tokenizer, bool skip_special_tokens = true)
      : tokenizer_(tokenizer), skip_special_(skip_special_tokens) {}
  /// The complete text that token `id` adds. \throws IndexError for an unknown id.
  std::string push(int32_t id);
  std::string flush() { return utf8_.flush(); }

 private:
  const text::BpeTokenizer& tokenizer_;
  bool skip_special_;
  Utf8Streamer utf8_;
};

/// Token ids in, text out, for any tokenizer (SentencePiece, WordPiece, ...): decodes the
/// whole sequence at each token and emits what was added, holding back a trailing U+FFFD
/// (byte pieces of a character still arriving). Quadratic in the length, which is
/// nothing next to a forward pass per token.
class DecodeStreamer {
 public:
  /// `tokenizer` must outlive the streamer. `context` (the prompt's ids) is decoded in
  /// front of the new tokens but not emitted: SentencePiece drops the space of a text's
  /// first piece, which the continuation of a prompt keeps.
  explicit DecodeStreamer(const text::Tokenizer& tokenizer, bool skip_special_tokens = true,
                          std::vector<int32_t> context = {});
  std::string push(int32_t id);
  /// What is held back.
  std::string flush();

 private:
  const text::Tokenizer& tokenizer_;
  bool skip_special_;
  std::vector<int32_t> ids_;
  size_t context_ids_ = 0;  // leading ids of ids_ that are context
  size_t emitted_ = 0;      // bytes of the decoded text printed so far (the context's included)
};

/// The streamer that suits `tokenizer`: TokenStreamer (exact bytes) for byte-level BPE,
/// DecodeStreamer after `context` for the others.
class TextStreamer {
 public:
  /// `tokenizer` must outlive the streamer.
  TextStreamer(const text::Tokenizer& tokenizer, std::vector<int32_t> context);
  std::string push(int32_t id) { return bpe_ ? bpe_->push(id) : decode_.push(id); }
  std::string flush() { return bpe_ ? bpe_->flush() : decode_.flush(); }

 private:
  std::unique_ptr<TokenStreamer> bpe_;
  DecodeStreamer decode_;
};

/// The text `generated` adds after `prompt`: decode(prompt + generated) minus decode(prompt)
/// (decode(generated) alone would lose a SentencePiece continuation's leading space).
std::string continuation_text(const text::Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                              const std::vector<int32_t>& generated, bool skip_special_tokens = true);

}  // namespace skiff::nlp
