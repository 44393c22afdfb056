#include "framework/text/tokenizer_json.h"

#include <functional>

#include "framework/io/file.h"
#include "framework/text/unicode.h"

namespace skiff::text::detail {

json parse_json_file(const fs::path& path) {
  std::string bytes = io::read_file(path);
  json j = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) SKIFF_THROW(ValueError, "{}: not valid JSON", path.string());
  return j;
}

namespace {


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

}  // namespace

json parse_tokenizer_json(const fs::path& path, ModelCapture& cap) {
  std::string bytes = io::read_file(path);
  json root;
  CaptureSax sax(root, cap);
  if (!json::sax_parse(bytes, &sax))
    SKIFF_THROW(ValueError, "{}: not valid JSON: {}", path.string(), sax.error());
  return root;
}

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

std::vector<AddedToken> read_added_tokens(const Reader& r) {
  std::vector<AddedToken> out;
  if (!r.has("added_tokens")) return out;
  const json& list = r.at("added_tokens");
  if (!list.is_array()) r.fail("'added_tokens' must be an array");
  for (size_t i = 0; i < list.size(); ++i) {
    Reader t(list[i], r.file(), fmt::format("added_tokens[{}]", i));
    AddedToken a;
    a.content = t.string("content");
    const json& id = t.at("id");
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
      t.fail(fmt::format("'id' must be a non-negative integer, got {}", id.dump()));
    a.id = int32_t(id.get<int64_t>());
    a.special = t.boolean("special", false);
    a.lstrip = t.boolean("lstrip", false);
    a.rstrip = t.boolean("rstrip", false);
    out.push_back(std::move(a));
  }
  return out;
}

bool declares_byte_level(const json& root) {
  std::function<bool(const json&)> has = [&](const json& j) {
    if (j.is_object()) {
      if (auto t = j.find("type"); t != j.end() && t->is_string() && *t == "ByteLevel") return true;
      for (const auto& [key, value] : j.items())
        if (has(value)) return true;
    } else if (j.is_array()) {
      for (const json& v : j)
        if (has(v)) return true;
    }
    return false;
  };
  for (const char* key : {"pre_tokenizer", "decoder"})
    if (root.is_object() && root.contains(key) && has(root.at(key))) return true;
  return false;
}

}  // namespace skiff::text::detail
