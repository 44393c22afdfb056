// Readers of byte-level BPE files: Hugging Face tokenizer.json and GPT-2's encoder.json +
// vocab.bpe (the loaders declared in bpe_tokenizer.h).
#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/text/bpe_tokenizer.h"
#include "framework/text/lines.h"
#include "framework/text/tokenizer_json.h"
#include "framework/text/unicode.h"

namespace skiff::text {

namespace fs = std::filesystem;
using namespace detail;

namespace {

void read_pre_tokenizer(const Reader& r, std::vector<PreTokenizerStep>& steps) {
  std::string type = r.string("type");
  if (type == "Sequence") {
    const json& list = r.at("pretokenizers");
    if (!list.is_array()) r.fail("'pretokenizers' must be an array");
    for (size_t i = 0; i < list.size(); ++i)
      read_pre_tokenizer(Reader(list[i], r.file(), fmt::format("{}.pretokenizers[{}]", r.path(), i)), steps);
    return;
  }
  PreTokenizerStep step;
  if (type == "ByteLevel") {
    step.kind = PreTokenizerStep::Kind::ByteLevel;
    step.add_prefix_space = r.boolean("add_prefix_space", false);
    if (r.boolean("use_regex", true)) step.regex = std::make_shared<SplitRegex>(std::string(kGpt2Pattern));
  } else if (type == "Split") {
    step.kind = PreTokenizerStep::Kind::Split;
    step.regex = split_regex(r);
    std::string b = r.string("behavior");
    if (b == "Removed") step.behavior = SplitBehavior::Removed;
    else if (b == "Isolated") step.behavior = SplitBehavior::Isolated;
    else if (b == "MergedWithPrevious") step.behavior = SplitBehavior::MergedWithPrevious;
    else if (b == "MergedWithNext") step.behavior = SplitBehavior::MergedWithNext;
    else if (b == "Contiguous") step.behavior = SplitBehavior::Contiguous;
    else r.fail(fmt::format("unknown Split behavior '{}' (expected Removed, Isolated, MergedWithPrevious, "
                            "MergedWithNext or Contiguous)", b));
    step.invert = r.boolean("invert", false);
  } else {
    SKIFF_THROW(NotImplementedError, "{}: {}: pre-tokenizer type '{}' is not supported (supported: ByteLevel, Split, "
                "Sequence of them)", r.file(), r.path(), type);
  }
  steps.push_back(std::move(step));
}

void read_normalizer(const Reader& r, std::vector<NormalizationForm>& forms) {
  std::string type = r.string("type");
  if (type == "Sequence") {
    const json& list = r.at("normalizers");
    if (!list.is_array()) r.fail("'normalizers' must be an array");
    for (size_t i = 0; i < list.size(); ++i)
      read_normalizer(Reader(list[i], r.file(), fmt::format("{}.normalizers[{}]", r.path(), i)), forms);
    return;
  }
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    forms.push_back(normalization_form_from_name(type));
    return;
  }
  SKIFF_THROW(NotImplementedError, "{}: {}: normalizer type '{}' is not supported (supported: NFC, NFD, NFKC, NFKD, "
              "Sequence of them)", r.file(), r.path(), type);
}

}  // namespace

namespace {

BpeTokenizer bpe_from_json(const json& root, ModelCapture& cap, const std::string& file) {
  Reader r(root, file);
  if (!root.is_object()) r.fail("expected a JSON object at the top level");

  Reader model = r.child("model");
  if (model.has("type") && model.string("type") != "BPE")
    SKIFF_THROW(NotImplementedError, "{}: model type '{}' is not supported (only BPE)", file, model.string("type"));
  if (model.boolean("byte_fallback", false))
    SKIFF_THROW(NotImplementedError, "{}: model.byte_fallback (SentencePiece-style BPE) is not supported by the "
                "byte-level BPE reader: load it with text::load_tokenizer()", file);
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.has(key) && !model.string(key).empty())
      SKIFF_THROW(NotImplementedError, "{}: model.{} is not supported", file, key);
  if (model.has("dropout") && !(model.at("dropout").is_number() && model.at("dropout").get<double>() == 0.0))
    SKIFF_THROW(NotImplementedError, "{}: model.dropout is not supported", file);

  const json& vocab_json = model.at("vocab");
  if (!vocab_json.is_object())
    model.fail(fmt::format("'vocab' must be an object of token -> id, got {}", vocab_json.type_name()));
  if (!cap.bad_token.empty())
    SKIFF_THROW(ValueError, "{}: model.vocab: token '{}' has id {}, expected an integer in [0, 2^31)", file,
                cap.bad_token, cap.bad_token_id);
  if (!model.at("merges").is_array()) model.fail("'merges' must be an array");
  if (cap.bad_merge >= 0)
    SKIFF_THROW(ValueError, "{}: model.merges[{}]: expected \"left right\" or [\"left\", \"right\"], got {}", file,
                cap.bad_merge, cap.bad_merge_text);
  Vocab vocab = std::move(cap.vocab);
  std::vector<MergeRule> merges = std::move(cap.merges);
  auto where = [&](size_t i) { return fmt::format("{}: model.merges[{}]", file, i); };
  auto bpe = std::make_shared<const BpeModel>(std::move(vocab), merges, where, file + ": model.vocab",
                                              model.boolean("ignore_merges", false));

  BpeTokenizerConfig config;
  if (r.has("normalizer")) read_normalizer(r.child("normalizer"), config.normalizers);
  if (!r.has("pre_tokenizer"))
    SKIFF_THROW(NotImplementedError,
                "{}: no pre_tokenizer: only byte-level BPE (a ByteLevel pre-tokenizer) is supported", file);
  read_pre_tokenizer(r.child("pre_tokenizer"), config.pre_tokenizers);
  if (std::none_of(config.pre_tokenizers.begin(), config.pre_tokenizers.end(),
                   [](const auto& s) { return s.kind == PreTokenizerStep::Kind::ByteLevel; }))
    SKIFF_THROW(NotImplementedError, "{}: pre_tokenizer has no ByteLevel step: only byte-level BPE is supported", file);
  if (r.has("decoder")) {
    std::string type = r.child("decoder").string("type");
    if (type != "ByteLevel")
      SKIFF_THROW(NotImplementedError, "{}: decoder type '{}' is not supported (only ByteLevel)", file, type);
  }
  config.added_tokens = read_added_tokens(r);
  return BpeTokenizer(std::move(bpe), std::move(config), file);
}

}  // namespace

namespace detail {
std::unique_ptr<Tokenizer> byte_level_tokenizer_from_json(const json& root, ModelCapture& cap, const std::string& file) {
  return std::make_unique<BpeTokenizer>(bpe_from_json(root, cap, file));
}
}  // namespace detail

BpeTokenizer BpeTokenizer::from_tokenizer_json(const fs::path& path) {
  ModelCapture cap;
  const json root = parse_tokenizer_json(path, cap);
  return bpe_from_json(root, cap, path.string());
}

BpeTokenizer BpeTokenizer::from_gpt2_files(const fs::path& encoder_json, const fs::path& vocab_bpe) {
  const json enc = parse_json_file(encoder_json);
  Vocab vocab = read_vocab(Reader(enc, encoder_json.string()));

  const std::string merges_file = vocab_bpe.string();
  std::string text = io::read_file(vocab_bpe);
  check_utf8(text, merges_file);
  std::vector<MergeRule> merges;
  std::vector<size_t> lines;
  for_each_line(text, [&](std::string_view line, size_t line_no) {
    if (line.empty() || (line_no == 1 && line.starts_with("#version"))) return;
    MergeRule rule;
    if (!split_merge_line(line, rule))
      SKIFF_THROW(ValueError, "{}: line {}: expected two tokens separated by one space, got '{}'", merges_file, line_no,
                  line);
    merges.push_back(std::move(rule));
    lines.push_back(line_no);
  });
  auto where = [&](size_t i) { return fmt::format("{}: line {}", merges_file, lines[i]); };
  auto bpe = std::make_shared<const BpeModel>(std::move(vocab), merges, where, encoder_json.string());

  BpeTokenizerConfig config;
  PreTokenizerStep byte_level;
  byte_level.kind = PreTokenizerStep::Kind::ByteLevel;
  byte_level.regex = std::make_shared<SplitRegex>(std::string(kGpt2Pattern));
  config.pre_tokenizers.push_back(std::move(byte_level));
  return BpeTokenizer(std::move(bpe), std::move(config), encoder_json.parent_path().string());
}

BpeTokenizer BpeTokenizer::load(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / "tokenizer.json", ec)) return from_tokenizer_json(path / "tokenizer.json");
    if (fs::exists(path / "encoder.json", ec) && fs::exists(path / "vocab.bpe", ec))
      return from_gpt2_files(path / "encoder.json", path / "vocab.bpe");
    SKIFF_THROW(ValueError, "tokenizer: directory '{}' holds neither tokenizer.json nor encoder.json + vocab.bpe",
                path.string());
  }
  if (!fs::exists(path, ec)) SKIFF_THROW(ValueError, "tokenizer: '{}' does not exist", path.string());
  if (path.filename() == "encoder.json" || path.filename() == "vocab.bpe") {
    fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    return from_gpt2_files(dir / "encoder.json", dir / "vocab.bpe");
  }
  return from_tokenizer_json(path);
}

}  // namespace skiff::text
