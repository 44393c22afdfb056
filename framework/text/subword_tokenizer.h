#pragma once
/// \file subword_tokenizer.h
/// Hugging Face tokenizer.json pipelines whose model works on characters rather than
/// GPT-2's byte alphabet:
///   - SentencePiece-style BPE (Llama 2, Gemma, Mistral, ...): normalizers such as
///     Prepend("▁") + Replace(" " -> "▁") or a Metaspace pre-tokenizer, a BPE model with
///     `byte_fallback` (<0xNN> tokens for characters outside the vocabulary) and
///     `fuse_unk`, and the decoders Replace, ByteFallback, Fuse, Strip / Metaspace;
///   - WordPiece (BERT): BertNormalizer, BertPreTokenizer, a WordPiece model with its
///     "##" continuation prefix and [UNK], and the WordPiece decoder.
/// The ids are those of the references (@lenml/tokenizers, a port of transformers.js),
/// checked by golden tests (tests/framework/text/golden_test.cpp) on Llama 2's, Gemma 3's
/// and BERT's real files.
///
/// Encoding runs: added tokens cut out of the raw text (added_tokens.h); each remaining
/// stretch normalized (normalizer_steps.h), pre-tokenized into words
/// (pre_tokenizer_steps.h) and each word encoded by the model; with `fuse_unk`, a run of
/// unknown tokens within a stretch becomes one. Decoding maps ids to token strings (special
/// tokens dropped on request) and runs the decoders (decoder_steps.h); without decoders the
/// tokens are joined with spaces, as the reference does.

#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "framework/text/added_tokens.h"
#include "framework/text/decoder_steps.h"
#include "framework/text/normalizer_steps.h"
#include "framework/text/pre_tokenizer_steps.h"
#include "framework/text/tokenizer.h"
#include "framework/text/word_model.h"

namespace skiff::text {

/// Everything around the model.
struct SubwordTokenizerConfig {
  std::vector<NormalizerStep> normalizers;
  std::vector<PreTokenizerSpec> pre_tokenizers;
  std::vector<DecoderSpec> decoders;
  std::vector<AddedToken> added_tokens;
  bool fuse_unk = false;
};

class SubwordTokenizer : public Tokenizer {
 public:
  /// `kind` names the tokenizer in messages and `skiff nlp tokenize` ("WordPiece", ...).
  SubwordTokenizer(std::shared_ptr<const WordModel> model, SubwordTokenizerConfig config, std::string source,
                   std::string kind);

  /// A BERT vocab.txt (one token per line, the line number is the id), with BERT's
  /// uncased defaults: BertNormalizer (clean text, Chinese characters, lowercase, strip
  /// accents), BertPreTokenizer, WordPiece ("##", [UNK], 100 characters), the WordPiece
  /// decoder with cleanup, and [PAD] [UNK] [CLS] [SEP] [MASK] as special added tokens.
  /// \throws IoError when it cannot be read; ValueError naming the file and line for
  ///   invalid UTF-8, a repeated token, or no [UNK].
  static SubwordTokenizer from_bert_vocab(const std::filesystem::path& vocab_txt);

  Encoding encode(std::string_view text) const override;
  std::vector<int32_t> encode_ids(std::string_view text) const override;
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const override;
  std::string id_to_token(int32_t id) const override;
  int32_t token_to_id(std::string_view token) const override;
  int32_t vocab_size() const override;
  void clear_cache() const override { model_->clear_cache(); }
  std::string kind() const override { return kind_; }

  const WordModel& model() const { return *model_; }
  const SubwordTokenizerConfig& config() const { return config_; }

 private:
  void encode_into(std::string_view text, std::vector<int32_t>& ids, std::vector<Span>* offsets) const;

  std::shared_ptr<const WordModel> model_;
  SubwordTokenizerConfig config_;
  std::string kind_;
  AddedTokenSplitter splitter_;
  std::unordered_map<int32_t, int32_t> added_by_id_;
};

}  // namespace skiff::text
