// Jinja tokens: text between tags as it is, the inside of {{ }} and {% %} as names,
// literals and operators; comments dropped. A '-' just inside a tag strips the whitespace
// (newlines included) on that side, as Jinja2 does. Hugging Face turns on two more rules,
// applied here rather than by rewriting the source so that error lines stay true:
// lstrip_blocks (spaces and tabs before a block or comment tag that starts its line go)
// and trim_blocks (the newline right after a block or comment tag goes).
#include <cctype>

#include "framework/core/error.h"
#include "framework/text/jinja_syntax.h"

namespace skiff::text::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

void rstrip(std::string& s) {
  while (!s.empty() && is_space(s.back())) s.pop_back();
}

class Lexer {
 public:
  Lexer(std::string_view src, const std::string& name) : src_(src), name_(name) {}

  std::vector<Token> run() {
    bool strip_next_text = false;
    while (pos_ < src_.size()) {
      const size_t open = find_tag(pos_);
      std::string text(src_.substr(pos_, open - pos_));
      if (strip_next_text) {
        size_t k = 0;
        while (k < text.size() && is_space(text[k])) ++k;
        text.erase(0, k);
      }
      const bool strip_before = open + 2 < src_.size() && src_[open + 2] == '-';
      const bool keep_before = open + 2 < src_.size() && src_[open + 1] != '{' && src_[open + 2] == '+';
      if (open < src_.size() && strip_before) rstrip(text);
      else if (open < src_.size() && !keep_before && src_[open + 1] != '{') lstrip_block_line(text, open);
      if (!text.empty()) push(Token::Kind::Text, std::move(text), line_);
      advance_to(open);
      if (pos_ >= src_.size()) break;
      const char opener = src_[pos_ + 1];
      const int tag_line = line_;
      advance_to(pos_ + (strip_before || keep_before ? 3 : 2));
      if (opener == '#') {
        const size_t close = src_.find("#}", pos_);
        if (close == std::string_view::npos) fail(tag_line, "a comment '{#' is never closed with '#}'");
        strip_next_text = close > pos_ && src_[close - 1] == '-';
        advance_to(close + 2);
        if (!strip_next_text) trim_block_newline();
        continue;
      }
      const bool is_block = opener == '%';
      push(is_block ? Token::Kind::BlockBegin : Token::Kind::VarBegin, "", tag_line);
      strip_next_text = lex_tag(is_block ? '%' : '}', tag_line);
      push(is_block ? Token::Kind::BlockEnd : Token::Kind::VarEnd, "", line_);
      if (is_block && !strip_next_text) trim_block_newline();
    }
    push(Token::Kind::End, "", line_);
    return std::move(tokens_);
  }

 private:
  // The next "{{", "{%" or "{#" at or after `from`, or the end.
  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i)
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    return src_.size();
  }

  // lstrip_blocks: drops the spaces and tabs that end `text` (the source up to `open`)
  // when only they stand between the start of a line and the tag at `open`.
  void lstrip_block_line(std::string& text, size_t open) const {
    size_t k = 0;  // spaces and tabs right before the tag
    while (k < text.size() && k < open && (src_[open - k - 1] == ' ' || src_[open - k - 1] == '\t')) ++k;
    if (open == k || src_[open - k - 1] == '\n') text.resize(text.size() - k);
  }

  // trim_blocks: the first newline after a block tag.
  void trim_block_newline() {
    if (src_.substr(pos_).starts_with("\r\n")) advance_to(pos_ + 2);
    else if (pos_ < src_.size() && src_[pos_] == '\n') advance_to(pos_ + 1);
  }

  void advance_to(size_t p) {
    for (; pos_ < p && pos_ < src_.size(); ++pos_)
      if (src_[pos_] == '\n') ++line_;
    pos_ = p;
  }

  void push(Token::Kind k, std::string text, int line) { tokens_.push_back({k, std::move(text), line}); }

  [[noreturn]] void fail(int line, const std::string& what) const {
    throw ValueError(fmt::format("template {} line {}: {}", name_, line, what));
  }

  // Tokens up to the closing "%}" or "}}"; returns whether it was "-%}" / "-}}".
  bool lex_tag(char closer, int tag_line) {
    while (true) {
      while (pos_ < src_.size() && is_space(src_[pos_])) advance_to(pos_ + 1);
      if (pos_ >= src_.size())
        fail(tag_line, closer == '%' ? "a tag '{%' is never closed with '%}'" : "'{{' is never closed with '}}'");
      const std::string_view rest = src_.substr(pos_);
      const std::string close = std::string(1, closer) + "}";
      if (rest.starts_with(close)) {
        advance_to(pos_ + 2);
        return false;
      }
      if (rest.starts_with("-" + close)) {
        advance_to(pos_ + 3);
        return true;
      }
      const char c = src_[pos_];
      if (c == '\'' || c == '"') {
        lex_string(c);
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        lex_number();
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t e = pos_;
        while (e < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
        push(Token::Kind::Name, std::string(src_.substr(pos_, e - pos_)), line_);
        advance_to(e);
      } else {
        lex_operator();
      }
    }
  }

  void lex_string(char quote) {
    const int start_line = line_;
    std::string value;
    size_t i = pos_ + 1;
    for (; i < src_.size() && src_[i] != quote; ++i) {
      if (src_[i] != '\\' || i + 1 >= src_.size()) {
        value += src_[i];
        continue;
      }
      const char e = src_[++i];
      switch (e) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case '\n': break;  // a backslash-newline continues the line
        default: value += '\\', value += e;  // Python keeps unknown escapes as written
      }
    }
    if (i >= src_.size()) fail(start_line, "a string literal is never closed");
    advance_to(i + 1);
    push(Token::Kind::String, std::move(value), start_line);
  }

  void lex_number() {
    size_t e = pos_;
    auto digits = [&] {
      while (e < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
    };
    digits();
    bool is_float = false;
    if (e + 1 < src_.size() && src_[e] == '.' && std::isdigit(static_cast<unsigned char>(src_[e + 1]))) {
      is_float = true;
      ++e;
      digits();
    }
    if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
      size_t k = e + 1;
      if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
      if (k < src_.size() && std::isdigit(static_cast<unsigned char>(src_[k]))) {
        is_float = true;
        e = k;
        digits();
      }
    }
    std::string text;
    for (char ch : src_.substr(pos_, e - pos_))
      if (ch != '_') text += ch;
    push(is_float ? Token::Kind::Float : Token::Kind::Int, std::move(text), line_);
    advance_to(e);
  }

  void lex_operator() {
    static constexpr std::string_view two[] = {"//", "**", "==", "!=", "<=", ">="};
    for (std::string_view op : two)
      if (src_.substr(pos_).starts_with(op)) {
        push(Token::Kind::Op, std::string(op), line_);
        advance_to(pos_ + 2);
        return;
      }
    const char c = src_[pos_];
    if (std::string_view("+-*/%~()[]{}.,:|=<>").find(c) == std::string_view::npos)
      fail(line_, fmt::format("unexpected character '{}'", c));
    push(Token::Kind::Op, std::string(1, c), line_);
    advance_to(pos_ + 1);
  }

  std::string_view src_;
  const std::string& name_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const std::string& name) { return Lexer(source, name).run(); }

}  // namespace skiff::text::jinja
