#pragma once
/// \file tokenizer.h
/// The interface every skiff tokenizer implements, and load_tokenizer(), which picks
/// the kind from the files a model ships with:
///
/// | file                                   | kind                    | class              |
/// |----------------------------------------|-------------------------|--------------------|
/// | tokenizer.json, BPE + ByteLevel        | byte-level BPE          | BpeTokenizer       |
/// | tokenizer.json, BPE without ByteLevel  | BPE on characters (SentencePiece-style, byte fallback) | SubwordTokenizer |
/// | tokenizer.json, WordPiece              | WordPiece (BERT)        | SubwordTokenizer   |
/// | encoder.json + vocab.bpe               | GPT-2 byte-level BPE    | BpeTokenizer       |
/// | vocab.txt                              | WordPiece, BERT's uncased defaults | SubwordTokenizer |
/// | *.model                                | SentencePiece (libsentencepiece) | SentencePieceTokenizer |
///
/// All of them take UTF-8 text and give ids plus the byte range of the input each id
/// came from; all are immutable after loading, so encode and decode may run on several
/// threads at once.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "framework/text/split_regex.h"

namespace skiff::text {

/// Token ids and, for each, the byte range of the input text it came from. A token
/// made from a normalized stretch (e.g. NFC composing "e" + U+0301) covers the input
/// bytes of that stretch; text a tokenizer adds (a prefix space, a "▁") is an empty range.
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<Span> offsets;
};

/// Options of encode_batch().
struct BatchOptions {
  /// Keep at most this many ids per text (from the start); 0: no limit.
  size_t max_length = 0;
  /// Pad every row to the longest row (or to max_length when `pad_to_max_length`).
  bool pad = false;
  bool pad_to_max_length = false;
  /// The id used for padding. Required (>= 0) when padding.
  int32_t pad_id = -1;
};

/// Rows of ids with their attention masks (1 for a real token, 0 for padding).
struct BatchEncoding {
  std::vector<std::vector<int32_t>> ids;
  std::vector<std::vector<uint8_t>> attention_mask;
};

/// A tokenizer: text <-> ids.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  /// Encodes `text` (UTF-8) with offsets. No BOS/EOS is added (the references'
  /// `add_special_tokens: false`). \throws ValueError naming the byte offset of invalid UTF-8.
  virtual Encoding encode(std::string_view text) const = 0;
  /// The ids alone (may be faster than encode()). \throws as encode().
  virtual std::vector<int32_t> encode_ids(std::string_view text) const { return encode(text).ids; }
  /// Encodes several texts (in parallel over the OpenMP threads), truncating and padding
  /// as `options` say. \throws ValueError when padding without a pad id, or as encode().
  BatchEncoding encode_batch(std::span<const std::string> texts, const BatchOptions& options = {}) const;

  /// The text of `ids`, as the model's decoder writes it; special tokens are left out
  /// with `skip_special_tokens`. \throws IndexError naming an id that is no token.
  virtual std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const = 0;

  /// The token string of `id` as the files spell it. \throws IndexError for an unknown id.
  virtual std::string id_to_token(int32_t id) const = 0;
  /// The id of a token string, or -1.
  virtual int32_t token_to_id(std::string_view token) const = 0;
  /// One more than the largest id.
  virtual int32_t vocab_size() const = 0;

  /// Drops caches of encoded words (for benchmarks of cold runs); a no-op where there are none.
  virtual void clear_cache() const {}
  /// A short name of the kind: "byte-level BPE", "BPE (byte fallback)", "WordPiece", "SentencePiece ...".
  virtual std::string kind() const = 0;
  /// What the tokenizer was read from (a file or directory).
  const std::string& source() const { return source_; }

 protected:
  explicit Tokenizer(std::string source) : source_(std::move(source)) {}

 private:
  std::string source_;
};

/// Loads the tokenizer at `path`: a tokenizer.json (any name ending in .json other than
/// encoder.json), GPT-2's encoder.json or vocab.bpe (the other file beside it), a BERT
/// vocab.txt, a SentencePiece .model, or a directory holding one of them (tried in that
/// order). The kind comes from the file itself (see the table in the file comment).
/// \throws ValueError naming `path` when it does not exist or holds no tokenizer file;
///   NotImplementedError naming the file and the component for a model, normalizer,
///   pre-tokenizer or decoder type skiff lacks; the readers' errors otherwise.
std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& path);

}  // namespace skiff::text
