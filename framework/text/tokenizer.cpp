#include "framework/text/tokenizer.h"

#include <algorithm>

#include "framework/core/error.h"
#include "framework/text/bpe_tokenizer.h"
#include "framework/text/sentencepiece_tokenizer.h"
#include "framework/text/subword_tokenizer.h"
#include "framework/text/tokenizer_json.h"

namespace skiff::text {

BatchEncoding Tokenizer::encode_batch(std::span<const std::string> texts, const BatchOptions& options) const {
  SKIFF_CHECK(!options.pad || options.pad_id >= 0, "encode_batch: padding needs a pad id >= 0, got {}",
              options.pad_id);
  SKIFF_CHECK(!options.pad_to_max_length || options.max_length > 0,
              "encode_batch: pad_to_max_length needs max_length > 0");
  BatchEncoding out;
  const int64_t n = int64_t(texts.size());
  out.ids.resize(texts.size());
  std::vector<std::string> errors(texts.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < n; ++i) {
    try {
      out.ids[i] = encode_ids(texts[i]);
    } catch (const Error& e) {
      errors[i] = e.what();
    }
  }
  for (int64_t i = 0; i < n; ++i)
    if (!errors[i].empty()) SKIFF_THROW(ValueError, "encode_batch: text {}: {}", i, errors[i]);
  size_t width = 0;
  for (auto& row : out.ids) {
    if (options.max_length > 0 && row.size() > options.max_length) row.resize(options.max_length);
    width = std::max(width, row.size());
  }
  if (options.pad_to_max_length) width = options.max_length;
  out.attention_mask.resize(texts.size());
  for (size_t i = 0; i < out.ids.size(); ++i) {
    auto& row = out.ids[i];
    out.attention_mask[i].assign(row.size(), 1);
    if (options.pad && row.size() < width) {
      out.attention_mask[i].resize(width, 0);
      row.resize(width, options.pad_id);
    }
  }
  return out;
}

namespace {

namespace fs = std::filesystem;

std::unique_ptr<Tokenizer> load_tokenizer_json(const fs::path& path) {
  const std::string file = path.string();
  detail::ModelCapture cap;
  const detail::json root = detail::parse_tokenizer_json(path, cap);
  detail::Reader r(root, file);
  if (!root.is_object()) r.fail("expected a JSON object at the top level");
  detail::Reader model = r.child("model");
  const std::string type = model.has("type") ? model.string("type") : "BPE";
  if (type == "BPE") {
    if (detail::declares_byte_level(root) && !model.boolean("byte_fallback", false))
      return detail::byte_level_tokenizer_from_json(root, cap, file);
    return detail::subword_tokenizer_from_json(root, cap, file);
  }
  if (type == "WordPiece") return detail::subword_tokenizer_from_json(root, cap, file);
  SKIFF_THROW(NotImplementedError, "{}: model type '{}' is not supported (supported: BPE, WordPiece; SentencePiece "
              "Unigram models load from their .model file)", file, type);
}

std::unique_ptr<Tokenizer> load_file(const fs::path& path) {
  const std::string name = path.filename().string();
  if (name == "encoder.json" || name == "vocab.bpe") {
    fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    return std::make_unique<BpeTokenizer>(BpeTokenizer::from_gpt2_files(dir / "encoder.json", dir / "vocab.bpe"));
  }
  if (path.extension() == ".model") return std::make_unique<SentencePieceTokenizer>(path);
  if (path.extension() == ".txt") return std::make_unique<SubwordTokenizer>(SubwordTokenizer::from_bert_vocab(path));
  if (path.extension() == ".json") return load_tokenizer_json(path);
  SKIFF_THROW(ValueError, "tokenizer: '{}' is not a tokenizer file (expected tokenizer.json, encoder.json, vocab.bpe, "
              "vocab.txt or a SentencePiece .model)", path.string());
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / "tokenizer.json", ec)) return load_file(path / "tokenizer.json");
    if (fs::exists(path / "encoder.json", ec) && fs::exists(path / "vocab.bpe", ec))
      return load_file(path / "encoder.json");
    if (fs::exists(path / "vocab.txt", ec)) return load_file(path / "vocab.txt");
    std::vector<fs::path> models;
    for (const auto& entry : fs::directory_iterator(path, ec))
      if (entry.path().extension() == ".model") models.push_back(entry.path());
    if (models.size() == 1) return load_file(models[0]);
    SKIFF_CHECK(models.empty(), "tokenizer: directory '{}' holds {} .model files: name one", path.string(),
                models.size());
    SKIFF_THROW(ValueError, "tokenizer: directory '{}' holds no tokenizer.json, encoder.json + vocab.bpe, vocab.txt "
                "or SentencePiece .model", path.string());
  }
  SKIFF_CHECK(fs::exists(path, ec), "tokenizer: '{}' does not exist", path.string());
  return load_file(path);
}

}  // namespace skiff::text
