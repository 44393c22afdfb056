// Readers of SubwordTokenizer files: a tokenizer.json with a BPE model on characters
// (SentencePiece-style, byte fallback) or a WordPiece model, and BERT's vocab.txt.
#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/text/subword_tokenizer.h"
#include "framework/text/lines.h"
#include "framework/text/tokenizer_json.h"
#include "framework/text/unicode.h"
#include "framework/text/wordpiece_model.h"

namespace skiff::text {

namespace fs = std::filesystem;
using namespace detail;

namespace {

// Flattens Sequence entries: `key` is the list's name ("normalizers", "pretokenizers", "decoders").
template <typename ReadOne>
void read_sequence(const Reader& r, const char* key, ReadOne read_one) {
  if (r.string("type") != "Sequence") return read_one(r);
  const json& list = r.at(key);
  if (!list.is_array()) r.fail(fmt::format("'{}' must be an array", key));
  for (size_t i = 0; i < list.size(); ++i)
    read_sequence(Reader(list[i], r.file(), fmt::format("{}.{}[{}]", r.path(), key, i)), key, read_one);
}

[[noreturn]] void unsupported(const Reader& r, std::string_view what, std::string_view type, std::string_view list) {
  SKIFF_THROW(NotImplementedError, "{}: {}: {} type '{}' is not supported (supported: {}, Sequence of them)", r.file(),
              r.path(), what, type, list);
}

// The `pattern` of a Replace step. The reference reads a string pattern as a literal.
std::shared_ptr<const SplitRegex> replace_pattern(const Reader& r) { return split_regex(r); }

std::string string_or(const Reader& r, std::string_view key, std::string fallback) {
  return r.has(key) ? r.string(key) : fallback;
}

void read_normalizer(const Reader& r, std::vector<NormalizerStep>& steps) {
  NormalizerStep s;
  const std::string type = r.string("type");
  using Kind = NormalizerStep::Kind;
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    s.kind = Kind::Unicode;
    s.form = normalization_form_from_name(type);
  } else if (type == "Replace") {
    s.kind = Kind::Replace;
    Reader pattern = r.child("pattern");
    if (pattern.has("String")) s.literal = pattern.string("String");
    else s.pattern = replace_pattern(r);
    s.content = r.string("content");
  } else if (type == "Prepend") {
    s.kind = Kind::Prepend;
    s.content = r.string("prepend");
  } else if (type == "Lowercase") {
    s.kind = Kind::Lowercase;
  } else if (type == "StripAccents") {
    s.kind = Kind::StripAccents;
  } else if (type == "Strip") {
    s.kind = Kind::Strip;
    s.strip_left = r.boolean("strip_left", true);
    s.strip_right = r.boolean("strip_right", true);
  } else if (type == "BertNormalizer") {
    s.kind = Kind::Bert;
    s.clean_text = r.boolean("clean_text", true);
    s.handle_chinese_chars = r.boolean("handle_chinese_chars", true);
    s.lowercase = r.boolean("lowercase", true);
    if (r.has("strip_accents")) s.strip_accents = r.boolean("strip_accents", false);
  } else {
    unsupported(r, "normalizer", type, "NFC, NFD, NFKC, NFKD, Replace, Prepend, Lowercase, StripAccents, Strip, "
                "BertNormalizer");
  }
  steps.push_back(std::move(s));
}

void read_pre_tokenizer(const Reader& r, std::vector<PreTokenizerSpec>& steps) {
  PreTokenizerSpec s;
  const std::string type = r.string("type");
  using Kind = PreTokenizerSpec::Kind;
  if (type == "Metaspace") {
    s.kind = Kind::Metaspace;
    s.replacement = string_or(r, "replacement", s.replacement);
    SKIFF_CHECK(!s.replacement.empty(), "{}: {}: 'replacement' must not be empty", r.file(), r.path());
    const std::string scheme = string_or(r, "prepend_scheme", "always");
    if (scheme == "always") s.prepend = PreTokenizerSpec::Prepend::Always;
    else if (scheme == "first") s.prepend = PreTokenizerSpec::Prepend::First;
    else if (scheme == "never") s.prepend = PreTokenizerSpec::Prepend::Never;
    else r.fail(fmt::format("unknown prepend_scheme '{}' (expected always, first or never)", scheme));
    if (!r.boolean("add_prefix_space", true)) s.prepend = PreTokenizerSpec::Prepend::Never;
    s.split = r.boolean("split", true);
  } else if (type == "BertPreTokenizer") {
    s.kind = Kind::Bert;
  } else if (type == "Whitespace") {
    s.kind = Kind::Whitespace;
  } else if (type == "WhitespaceSplit") {
    s.kind = Kind::WhitespaceSplit;
  } else if (type == "Split") {
    s.kind = Kind::Split;
    s.regex = split_regex(r);
    const std::string b = r.string("behavior");
    if (b == "Removed") s.behavior = SplitBehavior::Removed;
    else if (b == "Isolated") s.behavior = SplitBehavior::Isolated;
    else if (b == "MergedWithPrevious") s.behavior = SplitBehavior::MergedWithPrevious;
    else if (b == "MergedWithNext") s.behavior = SplitBehavior::MergedWithNext;
    else if (b == "Contiguous") s.behavior = SplitBehavior::Contiguous;
    else r.fail(fmt::format("unknown Split behavior '{}'", b));
    s.invert = r.boolean("invert", false);
  } else if (type == "UnicodeWords") {
    s.kind = Kind::UnicodeWords;
    s.locale = string_or(r, "locale", "");
  } else {
    unsupported(r, "pre-tokenizer", type, "Metaspace, BertPreTokenizer, Whitespace, WhitespaceSplit, Split, UnicodeWords");
  }
  steps.push_back(std::move(s));
}

void read_decoder(const Reader& r, std::vector<DecoderSpec>& steps) {
  DecoderSpec d;
  const std::string type = r.string("type");
  using Kind = DecoderSpec::Kind;
  if (type == "Replace") {
    d.kind = Kind::Replace;
    d.pattern = replace_pattern(r);
    d.content = r.string("content");
  } else if (type == "ByteFallback") {
    d.kind = Kind::ByteFallback;
  } else if (type == "Fuse") {
    d.kind = Kind::Fuse;
  } else if (type == "Strip") {
    d.kind = Kind::Strip;
    d.content = r.string("content");
    for (std::string_view key : {"start", "stop"}) {
      const json& v = r.at(key);
      if (!v.is_number_unsigned()) r.fail(fmt::format("'{}' must be a non-negative integer, got {}", key, v.dump()));
      (key == "start" ? d.start : d.stop) = uint32_t(v.get<uint64_t>());
    }
  } else if (type == "WordPiece") {
    d.kind = Kind::WordPiece;
    d.prefix = string_or(r, "prefix", "##");
    d.cleanup = r.boolean("cleanup", true);
  } else if (type == "Metaspace") {
    d.kind = Kind::Metaspace;
    d.content = string_or(r, "replacement", "\xE2\x96\x81");
    d.strip_first_space = r.boolean("add_prefix_space", true) && string_or(r, "prepend_scheme", "always") != "never";
  } else {
    unsupported(r, "decoder", type, "Replace, ByteFallback, Fuse, Strip, WordPiece, Metaspace");
  }
  steps.push_back(std::move(d));
}

size_t max_chars(const Reader& model) {
  if (!model.has("max_input_chars_per_word")) return 100;
  const json& v = model.at("max_input_chars_per_word");
  if (!v.is_number_unsigned())
    model.fail(fmt::format("'max_input_chars_per_word' must be a non-negative integer, got {}", v.dump()));
  return size_t(v.get<uint64_t>());
}

}  // namespace

namespace detail {

std::unique_ptr<Tokenizer> subword_tokenizer_from_json(const json& root, ModelCapture& cap, const std::string& file) {
  Reader r(root, file);
  Reader model = r.child("model");
  const std::string type = model.has("type") ? model.string("type") : "BPE";
  if (!cap.bad_token.empty())
    SKIFF_THROW(ValueError, "{}: model.vocab: token '{}' has id {}, expected an integer in [0, 2^31)", file,
                cap.bad_token, cap.bad_token_id);
  if (!model.at("vocab").is_object()) model.fail("'vocab' must be an object of token -> id");
  std::shared_ptr<const WordModel> word_model;
  std::string kind;
  bool fuse_unk = false;
  if (type == "WordPiece") {
    word_model = std::make_shared<const WordPieceModel>(std::move(cap.vocab), string_or(model, "unk_token", "[UNK]"),
                                                         string_or(model, "continuing_subword_prefix", "##"),
                                                         max_chars(model), file + ": model.vocab");
    kind = "WordPiece";
  } else {
    if (!model.at("merges").is_array()) model.fail("'merges' must be an array");
    if (cap.bad_merge >= 0)
      SKIFF_THROW(ValueError, "{}: model.merges[{}]: expected \"left right\" or [\"left\", \"right\"], got {}", file,
                  cap.bad_merge, cap.bad_merge_text);
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
      if (model.has(key) && !model.string(key).empty())
        SKIFF_THROW(NotImplementedError, "{}: model.{} is not supported", file, key);
    if (model.has("dropout") && !(model.at("dropout").is_number() && model.at("dropout").get<double>() == 0.0))
      SKIFF_THROW(NotImplementedError, "{}: model.dropout is not supported", file);
    BpeOptions options;
    options.alphabet = BpeAlphabet::Characters;
    options.ignore_merges = model.boolean("ignore_merges", false);
    options.byte_fallback = model.boolean("byte_fallback", false);
    options.unk_token = model.has("unk_token") ? model.string("unk_token") : "";
    fuse_unk = model.boolean("fuse_unk", false);
    auto where = [&](size_t i) { return fmt::format("{}: model.merges[{}]", file, i); };
    word_model = std::make_shared<const BpeModel>(std::move(cap.vocab), cap.merges, where, file + ": model.vocab",
                                                  options);
    kind = options.byte_fallback ? "BPE (byte fallback)" : "BPE";
  }
  SubwordTokenizerConfig config;
  config.fuse_unk = fuse_unk;
  if (r.has("normalizer"))
    read_sequence(r.child("normalizer"), "normalizers", [&](const Reader& s) { read_normalizer(s, config.normalizers); });
  if (r.has("pre_tokenizer"))
    read_sequence(r.child("pre_tokenizer"), "pretokenizers",
                  [&](const Reader& s) { read_pre_tokenizer(s, config.pre_tokenizers); });
  if (r.has("decoder"))
    read_sequence(r.child("decoder"), "decoders", [&](const Reader& s) { read_decoder(s, config.decoders); });
  config.added_tokens = read_added_tokens(r);
  return std::make_unique<SubwordTokenizer>(std::move(word_model), std::move(config), file, kind);
}

}  // namespace detail

SubwordTokenizer SubwordTokenizer::from_bert_vocab(const fs::path& vocab_txt) {
  const std::string file = vocab_txt.string();
  const std::string text = io::read_file(vocab_txt);
  Vocab vocab;
  for_each_line(text, [&](std::string_view line, size_t line_no) {
    check_utf8(line, fmt::format("{}: line {}", file, line_no));
    // An empty line still takes its id (BERT's loader numbers lines), but gives no token.
    if (line.empty()) return;
    auto [it, fresh] = vocab.emplace(std::string(line), int32_t(line_no - 1));
    SKIFF_CHECK(fresh, "{}: line {}: token '{}' already appeared on line {}", file, line_no, line, it->second + 1);
  });
  SKIFF_CHECK(vocab.contains("[UNK]"), "{}: no [UNK] token: not a BERT vocabulary", file);
  SubwordTokenizerConfig config;
  for (const char* special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
    if (auto it = vocab.find(special); it != vocab.end())
      config.added_tokens.push_back({.content = special, .id = it->second, .special = true});
  config.normalizers.push_back({.kind = NormalizerStep::Kind::Bert});
  config.pre_tokenizers.push_back({.kind = PreTokenizerSpec::Kind::Bert});
  config.decoders.push_back({.kind = DecoderSpec::Kind::WordPiece});
  auto model = std::make_shared<const WordPieceModel>(std::move(vocab), "[UNK]", "##", 100, file);
  return SubwordTokenizer(std::move(model), std::move(config), file, "WordPiece");
}

}  // namespace skiff::text
