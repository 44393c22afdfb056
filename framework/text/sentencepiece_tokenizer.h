#pragma once
/// \file sentencepiece_tokenizer.h
/// SentencePiece models (.model files: Unigram or BPE, Kudo & Richardson 2018) through
/// libsentencepiece, the reference implementation itself, so the ids are the library's
/// (and `spm_encode`'s); and training a model on local text with the library's trainer.
/// The model's own normalization (nmt_nfkc by default) and "▁" handling apply; offsets
/// are the library's byte ranges of each piece in the input.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "framework/text/tokenizer.h"

namespace skiff::text {

class SentencePieceTokenizer : public Tokenizer {
 public:
  /// Loads a .model file. \throws IoError naming the file when it cannot be read or is
  ///   not a SentencePiece model (the library's message included).
  explicit SentencePieceTokenizer(const std::filesystem::path& model_file);
  ~SentencePieceTokenizer() override;
  SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept;

  /// \throws ValueError naming the byte offset of invalid UTF-8 (the library would
  ///   silently replace it).
  Encoding encode(std::string_view text) const override;
  std::vector<int32_t> encode_ids(std::string_view text) const override;
  /// The library's decoding: control pieces (<s>, </s>) decode to nothing whether or not
  /// `skip_special_tokens` is set. \throws IndexError for an id outside [0, vocab_size()).
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const override;
  std::string id_to_token(int32_t id) const override;
  int32_t token_to_id(std::string_view token) const override;
  int32_t vocab_size() const override;
  std::string kind() const override;

  /// What a piece is, with sentencepiece's numbers (which GGUF's token types reuse).
  enum class PieceType { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };
  /// A piece's score: its log probability (unigram) or minus its merge rank (BPE).
  /// \throws IndexError for an id outside [0, vocab_size()).
  float piece_score(int32_t id) const;
  /// \throws IndexError for an id outside [0, vocab_size()).
  PieceType piece_type(int32_t id) const;
  /// Whether the model puts "▁" before the text (sentencepiece's add_dummy_prefix).
  bool adds_dummy_prefix() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// What train_sentencepiece() trains.
struct SentencePieceTrainOptions {
  std::vector<std::filesystem::path> inputs;  ///< UTF-8 text files, one sentence per line
  std::filesystem::path output;               ///< the .model file to write (and .vocab beside it)
  int vocab_size = 8000;
  std::string model_type = "unigram";  ///< unigram, bpe, char or word
  double character_coverage = 0.9995;
  int threads = 1;                     ///< 1 keeps training deterministic
  bool byte_fallback = false;          ///< rare characters become <0xNN> pieces instead of <unk>
  /// The model's normalization: nmt_nfkc (SentencePiece's default), nfkc, nmt_nfkc_cf,
  /// nfkc_cf or identity (text as is: with byte_fallback, decode(encode(x)) == x).
  std::string normalization = "nmt_nfkc";
  bool remove_extra_whitespaces = true;  ///< collapse runs of spaces and trim (SentencePiece's default)
};

/// Trains a SentencePiece model with the library's trainer. Every input line is used (no
/// sampling), so the same inputs and options give the same model. Writes `output` and
/// `output` with .vocab atomically (a temporary prefix, then renames).
/// \throws ValueError naming the option or input that is wrong (missing file, invalid
///   UTF-8 with its byte offset, a vocabulary too large for the text) with the library's message.
void train_sentencepiece(const SentencePieceTrainOptions& options);

}  // namespace skiff::text
