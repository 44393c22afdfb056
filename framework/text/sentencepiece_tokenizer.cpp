#include "framework/text/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <unistd.h>

#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/text/unicode.h"

namespace skiff::text {

namespace fs = std::filesystem;

struct SentencePieceTokenizer::Impl {
  sentencepiece::SentencePieceProcessor sp;
};

SentencePieceTokenizer::SentencePieceTokenizer(const fs::path& model_file)
    : Tokenizer(model_file.string()), impl_(std::make_unique<Impl>()) {
  std::error_code ec;
  SKIFF_CHECK(fs::is_regular_file(model_file, ec), "tokenizer: '{}' does not exist or is not a file",
              model_file.string());
  auto status = impl_->sp.Load(model_file.string());
  if (!status.ok())
    SKIFF_THROW(IoError, "{}: not a SentencePiece model: {}", model_file.string(), status.ToString());
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;
SentencePieceTokenizer::SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept = default;

Encoding SentencePieceTokenizer::encode(std::string_view text) const {
  if (find_invalid_utf8(text) != std::string_view::npos) check_utf8(text, fmt::format("tokenizer ({})", source()));
  const auto spt = impl_->sp.EncodeAsImmutableProto(absl::string_view(text.data(), text.size()));
  Encoding e;
  e.ids.reserve(spt.pieces_size());
  for (size_t i = 0; i < spt.pieces_size(); ++i) {
    const auto piece = spt.pieces(int(i));
    e.ids.push_back(int32_t(piece.id()));
    e.offsets.push_back({piece.begin(), piece.end()});
  }
  return e;
}

std::vector<int32_t> SentencePieceTokenizer::encode_ids(std::string_view text) const {
  if (find_invalid_utf8(text) != std::string_view::npos) check_utf8(text, fmt::format("tokenizer ({})", source()));
  std::vector<int> ids;
  auto status = impl_->sp.Encode(absl::string_view(text.data(), text.size()), &ids);
  if (!status.ok()) SKIFF_THROW(ValueError, "{}: encoding failed: {}", source(), status.ToString());
  return {ids.begin(), ids.end()};
}

std::string SentencePieceTokenizer::decode(std::span<const int32_t> ids, bool /*skip_special_tokens*/) const {
  std::vector<int> keep;
  keep.reserve(ids.size());
  for (int32_t id : ids) {
    SKIFF_CHECK_INDEX(id >= 0 && id < vocab_size(), "{}: expected a token id in [0, {}), got {}", source(),
                      vocab_size(), id);
    keep.push_back(id);
  }
  std::string text;
  auto status = impl_->sp.Decode(keep, &text);
  if (!status.ok()) SKIFF_THROW(ValueError, "{}: decoding failed: {}", source(), status.ToString());
  return text;
}

std::string SentencePieceTokenizer::id_to_token(int32_t id) const {
  SKIFF_CHECK_INDEX(id >= 0 && id < vocab_size(), "{}: expected a token id in [0, {}), got {}", source(), vocab_size(),
                    id);
  return impl_->sp.IdToPiece(id);
}

int32_t SentencePieceTokenizer::token_to_id(std::string_view token) const {
  // The library answers the unknown piece's id for anything it lacks.
  int id = impl_->sp.PieceToId(absl::string_view(token.data(), token.size()));
  return id == impl_->sp.unk_id() && impl_->sp.IdToPiece(id) != token ? -1 : id;
}

int32_t SentencePieceTokenizer::vocab_size() const { return int32_t(impl_->sp.GetPieceSize()); }

std::string SentencePieceTokenizer::kind() const { return "SentencePiece"; }

void train_sentencepiece(const SentencePieceTrainOptions& o) {
  SKIFF_CHECK(!o.inputs.empty(), "train-tokenizer: no input files");
  SKIFF_CHECK(!o.output.empty() && o.output.extension() == ".model",
              "train-tokenizer: the output must be a .model file, got '{}'", o.output.string());
  SKIFF_CHECK(o.vocab_size > 0, "train-tokenizer: vocab_size must be positive, got {}", o.vocab_size);
  const std::vector<std::string> types{"unigram", "bpe", "char", "word"};
  SKIFF_CHECK(std::find(types.begin(), types.end(), o.model_type) != types.end(),
              "train-tokenizer: model type '{}' is not one of unigram, bpe, char, word", o.model_type);
  std::string inputs;
  for (const fs::path& p : o.inputs) {
    // The library skips invalid UTF-8 silently; say where it is instead.
    check_utf8(io::read_file(p), p.string());
    if (!inputs.empty()) inputs += ',';
    inputs += p.string();
  }
  const fs::path dir = o.output.parent_path().empty() ? fs::path(".") : o.output.parent_path();
  const std::string stem = o.output.stem().string();
  const fs::path temp = dir / fmt::format(".{}.tmp{}", stem, ::getpid());
  std::unordered_map<std::string, std::string> args{
      {"input", inputs},
      {"model_prefix", temp.string()},
      {"vocab_size", std::to_string(o.vocab_size)},
      {"model_type", o.model_type},
      {"character_coverage", fmt::format("{}", o.character_coverage)},
      {"num_threads", std::to_string(std::max(1, o.threads))},
      {"byte_fallback", o.byte_fallback ? "true" : "false"},
      {"normalization_rule_name", o.normalization},
      {"remove_extra_whitespaces", o.remove_extra_whitespaces ? "true" : "false"},
      {"input_sentence_size", "0"},  // every line: no random sampling
      {"shuffle_input_sentence", "false"},
      {"minloglevel", "2"},
  };
  sentencepiece::SetRandomGeneratorSeed(1);
  auto status = sentencepiece::SentencePieceTrainer::Train(args);
  auto cleanup = [&] {
    std::error_code ec;
    fs::remove(fs::path(temp.string() + ".model"), ec);
    fs::remove(fs::path(temp.string() + ".vocab"), ec);
  };
  if (!status.ok()) {
    cleanup();
    SKIFF_THROW(ValueError, "train-tokenizer ({}): {}", inputs, status.ToString());
  }
  fs::path vocab = o.output;
  vocab.replace_extension(".vocab");
  fs::rename(temp.string() + ".vocab", vocab);
  fs::rename(temp.string() + ".model", o.output);
}

}  // namespace skiff::text
