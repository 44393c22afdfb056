// Readers of tokenizer files: Hugging Face tokenizer.json and GPT-2's encoder.json +
// vocab.bpe (the loaders declared in bpe_tokenizer.h).
#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/text/bpe_tokenizer.h"
#include "framework/text/unicode.h"

namespace skiff::text {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json parse_json_file(const fs::path& path) {
  std::string bytes = io::read_file(path);
  json j = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) SKIFF_THROW(ValueError, "{}: not valid JSON", path.string());
  return j;
}

// model.vocab and model.merges of a tokenizer.json, taken out of the JSON while it is
// parsed: a DOM of 150k vocabulary entries and 150k merge pairs (std::map nodes and
// small arrays) took a third of the loading time. The first malformed entry of each
// is recorded for from_tokenizer_json() to report.
struct ModelCapture {
  Vocab vocab;
  std::vector<MergeRule> merges;
  int64_t bad_merge = -1;  // index of the first malformed merge
  std::string bad_merge_text;
  std::string bad_token, bad_token_id;  // the first vocabulary entry without a valid id
};

bool split_merge_line(std::string_view line, MergeRule& rule);

// A SAX handler that builds the DOM of everything but the insides of model.vocab and
// model.merges (nlohmann's own DOM builder does that part), and captures those.
class CaptureSax {
 public:
  CaptureSax(json& root, ModelCapture& cap) : dom_(root, /*allow_exceptions=*/false), cap_(cap) {}

  bool null() { return scalar("null", [&] { return dom_.null(); }); }
  bool boolean(bool v) { return scalar(v ? "true" : "false", [&] { return dom_.boolean(v); }); }
  bool number_float(json::number_float_t v, const std::string& s) {
    return scalar(s, [&] { return dom_.number_float(v, s); });
  }
  bool number_integer(json::number_integer_t v) {
    if (region() == Region::Vocab && skip_ == 0) return add_token(v >= 0 && v <= INT32_MAX, v);
    return scalar(std::to_string(v), [&] { return dom_.number_integer(v); });
  }
  bool number_unsigned(json::number_unsigned_t v) {
    if (region() == Region::Vocab && skip_ == 0) return add_token(v <= INT32_MAX, int64_t(v));
    return scalar(std::to_string(v), [&] { return dom_.number_unsigned(v); });
  }
  bool string(std::string& v) {
    if (skip_ == 0 && region() == Region::Merges) {
      MergeRule rule;
      if (!split_merge_line(v, rule)) bad_merge(json(v).dump());
      cap_.merges.push_back(std::move(rule));
      return true;
    }
    if (skip_ == 0 && region() == Region::Pair) {
      pair_.push_back(v);
      return true;
    }
    return scalar(json(v).dump(), [&] { return dom_.string(v); });
  }
  bool binary(json::binary_t& v) { return scalar("binary", [&] { return dom_.binary(v); }); }
  bool start_object(std::size_t n) { return start(true, n); }
  bool start_array(std::size_t n) { return start(false, n); }
  bool end_object() { return end(); }
  bool end_array() { return end(); }
  bool key(std::string& k) {
    if (skip_ > 0) return true;
    stack_.back().key = k;
    return region() == Region::Vocab || dom_.key(k);
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error_ = e.what();
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  enum class Region { None, Vocab, Merges, Pair };
  struct Frame {
    bool is_object;
    std::string key;
  };
  Region region() const {
    const size_t n = stack_.size();
    if (n < 3 || !stack_[0].is_object || stack_[0].key != "model" || !stack_[1].is_object) return Region::None;
    if (n == 3 && stack_[1].key == "vocab" && stack_[2].is_object) return Region::Vocab;
    if (stack_[1].key == "merges" && !stack_[2].is_object)
      return n == 3 ? Region::Merges : n == 4 ? Region::Pair : Region::None;
    return Region::None;
  }
  void bad_merge(std::string text) {
    if (cap_.bad_merge < 0) cap_.bad_merge = int64_t(cap_.merges.size()), cap_.bad_merge_text = std::move(text);
  }
  bool add_token(bool ok, int64_t id, std::string_view text = {}) {
    if (ok) cap_.vocab.insert_or_assign(stack_.back().key, int32_t(id));
    else if (cap_.bad_token.empty())
      cap_.bad_token = stack_.back().key, cap_.bad_token_id = text.empty() ? std::to_string(id) : std::string(text);
    return true;
  }
  // A scalar outside the captured regions goes to the DOM; inside, it is malformed.
  template <typename Forward>
  bool scalar(const std::string& text, Forward forward) {
    if (skip_ > 0) return true;
    switch (region()) {
      case Region::None: return forward();
      case Region::Vocab: return add_token(false, 0, text);
      case Region::Merges: bad_merge(text), cap_.merges.emplace_back(); return true;
      case Region::Pair: pair_ok_ = false; return true;
    }
    return true;
  }
  bool start(bool object, std::size_t n) {
    if (skip_ > 0) return ++skip_, true;
    switch (region()) {
      case Region::None:
        stack_.push_back({object, {}});
        return object ? dom_.start_object(n) : dom_.start_array(n);
      case Region::Vocab:  // a container as an id
        add_token(false, 0, object ? "{...}" : "[...]");
        return skip_ = 1, true;
      case Region::Merges:
        if (object) {
          bad_merge("an object");
          cap_.merges.emplace_back();
          return skip_ = 1, true;
        }
        stack_.push_back({false, {}});
        pair_.clear();
        pair_ok_ = true;
        return true;
      case Region::Pair:
        pair_ok_ = false;
        return skip_ = 1, true;
    }
    return true;
  }
  bool end() {
    if (skip_ > 0) return --skip_, true;
    if (region() == Region::Pair) {
      stack_.pop_back();
      MergeRule rule;
      if (pair_ok_ && pair_.size() == 2) rule = {std::move(pair_[0]), std::move(pair_[1])};
      else bad_merge(json(pair_).dump());
      cap_.merges.push_back(std::move(rule));
      return true;
    }
    const bool object = stack_.back().is_object;
    stack_.pop_back();
    return object ? dom_.end_object() : dom_.end_array();
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  ModelCapture& cap_;
  std::vector<Frame> stack_;
  int skip_ = 0;  // depth inside a malformed container that is being ignored
  std::vector<std::string> pair_;
  bool pair_ok_ = true;
  std::string error_;
};

json parse_tokenizer_json(const fs::path& path, ModelCapture& cap) {
  std::string bytes = io::read_file(path);
  json root;
  CaptureSax sax(root, cap);
  if (!json::sax_parse(bytes, &sax))
    SKIFF_THROW(ValueError, "{}: not valid JSON: {}", path.string(), sax.error());
  return root;
}

// Checked reads of a JSON object; errors name the file and the key path.
class Reader {
 public:
  Reader(const json& j, std::string file, std::string path = "")
      : j_(j), file_(std::move(file)), path_(std::move(path)) {}

  [[noreturn]] void fail(std::string_view what) const {
    SKIFF_THROW(ValueError, "{}: {}{}", file_, path_.empty() ? "" : path_ + ": ", what);
  }
  std::string key_path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  bool has(std::string_view key) const {
    return j_.is_object() && j_.contains(key) && !j_.at(std::string(key)).is_null();
  }
  const json& at(std::string_view key) const {
    if (!j_.is_object()) fail("expected an object");
    auto it = j_.find(key);
    if (it == j_.end()) SKIFF_THROW(ValueError, "{}: missing key '{}'", file_, key_path(key));
    return *it;
  }
  Reader child(std::string_view key) const { return Reader(at(key), file_, key_path(key)); }
  std::string string(std::string_view key) const {
    const json& v = at(key);
    if (!v.is_string())
      SKIFF_THROW(ValueError, "{}: '{}' must be a string, got {}", file_, key_path(key), v.type_name());
    return v.get<std::string>();
  }
  bool boolean(std::string_view key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = at(key);
    if (!v.is_boolean())
      SKIFF_THROW(ValueError, "{}: '{}' must be true or false, got {}", file_, key_path(key), v.dump());
    return v.get<bool>();
  }
  const json& value() const { return j_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

 private:
  const json& j_;
  std::string file_, path_;
};

Vocab read_vocab(const Reader& r) {
  if (!r.value().is_object()) r.fail(fmt::format("expected an object of token -> id, got {}", r.value().type_name()));
  Vocab vocab;
  vocab.reserve(r.value().size());
  for (auto it = r.value().begin(); it != r.value().end(); ++it) {
    if (!it.value().is_number_integer())
      r.fail(fmt::format("token '{}' has id {}, expected an integer", it.key(), it.value().dump()));
    int64_t id = it.value().get<int64_t>();
    if (id < 0 || id > INT32_MAX) r.fail(fmt::format("token '{}' has id {}, out of range", it.key(), id));
    vocab.emplace(it.key(), int32_t(id));
  }
  return vocab;
}

// "left right" with exactly one space (tokenizers < 0.20 and GPT-2's vocab.bpe).
bool split_merge_line(std::string_view line, MergeRule& rule) {
  size_t sp = line.find(' ');
  if (sp == std::string_view::npos || sp == 0 || sp + 1 >= line.size() ||
      line.find(' ', sp + 1) != std::string_view::npos)
    return false;
  rule.left = std::string(line.substr(0, sp));
  rule.right = std::string(line.substr(sp + 1));
  return true;
}

std::shared_ptr<const SplitRegex> split_regex(const Reader& r) {
  const json& pattern = r.at("pattern");
  Reader p(pattern, r.file(), r.key_path("pattern"));
  try {
    if (p.has("Regex")) return std::make_shared<SplitRegex>(p.string("Regex"));
    if (p.has("String")) {
      // A literal: quoted for ICU (\Q...\E cannot hold "\E" itself, so escape every character).
      std::string literal = p.string("String"), quoted;
      for (size_t pos = 0; pos < literal.size();) {
        char32_t cp = next_code_point(literal, pos);
        quoted += fmt::format("\\x{{{:X}}}", uint32_t(cp));
      }
      return std::make_shared<SplitRegex>(quoted, SplitRegex::Engine::Icu);
    }
  } catch (const ValueError& e) {
    p.fail(e.what());
  }
  p.fail("expected {\"Regex\": ...} or {\"String\": ...}");
}

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

BpeTokenizer BpeTokenizer::from_tokenizer_json(const fs::path& path) {
  const std::string file = path.string();
  ModelCapture cap;
  const json root = parse_tokenizer_json(path, cap);
  Reader r(root, file);
  if (!root.is_object()) r.fail("expected a JSON object at the top level");

  Reader model = r.child("model");
  if (model.has("type") && model.string("type") != "BPE")
    SKIFF_THROW(NotImplementedError, "{}: model type '{}' is not supported (only BPE)", file, model.string("type"));
  if (model.boolean("byte_fallback", false))
    SKIFF_THROW(NotImplementedError, "{}: model.byte_fallback (sentencepiece-style BPE) is not supported", file);
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
  if (r.has("added_tokens")) {
    const json& list = r.at("added_tokens");
    if (!list.is_array()) r.fail("'added_tokens' must be an array");
    for (size_t i = 0; i < list.size(); ++i) {
      Reader t(list[i], file, fmt::format("added_tokens[{}]", i));
      AddedToken a;
      a.content = t.string("content");
      const json& id = t.at("id");
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
        t.fail(fmt::format("'id' must be a non-negative integer, got {}", id.dump()));
      a.id = int32_t(id.get<int64_t>());
      a.special = t.boolean("special", false);
      a.lstrip = t.boolean("lstrip", false);
      a.rstrip = t.boolean("rstrip", false);
      config.added_tokens.push_back(std::move(a));
    }
  }
  return BpeTokenizer(std::move(bpe), std::move(config), file);
}

BpeTokenizer BpeTokenizer::from_gpt2_files(const fs::path& encoder_json, const fs::path& vocab_bpe) {
  const json enc = parse_json_file(encoder_json);
  Vocab vocab = read_vocab(Reader(enc, encoder_json.string()));

  const std::string merges_file = vocab_bpe.string();
  std::string text = io::read_file(vocab_bpe);
  check_utf8(text, merges_file);
  std::vector<MergeRule> merges;
  std::vector<size_t> lines;
  size_t line_no = 0;
  for (size_t pos = 0; pos <= text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string_view line(text.data() + pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || (line_no == 1 && line.starts_with("#version"))) continue;
    MergeRule rule;
    if (!split_merge_line(line, rule))
      SKIFF_THROW(ValueError, "{}: line {}: expected two tokens separated by one space, got '{}'", merges_file, line_no,
                  line);
    merges.push_back(std::move(rule));
    lines.push_back(line_no);
  }
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
