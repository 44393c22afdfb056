#include "framework/text/decoder_steps.h"

#include "framework/text/bpe_model.h"
#include "framework/text/unicode.h"

namespace skiff::text {

namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  size_t at = 0;
  for (size_t hit = s.find(from); hit != std::string::npos; hit = s.find(from, at)) {
    out.append(s, at, hit - at).append(to);
    at = hit + from.size();
  }
  if (at == 0) return;
  out.append(s, at, std::string::npos);
  s.swap(out);
}

void replace(const DecoderSpec& d, std::string& token) {
  std::vector<Span> matches;
  d.pattern->find_all(token, matches);
  if (matches.empty()) return;
  std::string out;
  uint32_t at = 0;
  for (const Span& m : matches) {
    out.append(token, at, m.begin - at).append(d.content);
    at = m.end;
  }
  out.append(token, at, std::string::npos);
  token.swap(out);
}

void byte_fallback(std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  std::string bytes;
  bool in_run = false;
  for (std::string& t : tokens) {
    int b = byte_fallback_value(t);
    if (b >= 0) {
      bytes.push_back(char(b));
      in_run = true;
      continue;
    }
    if (in_run) out.push_back(to_valid_utf8(bytes)), bytes.clear(), in_run = false;
    out.push_back(std::move(t));
  }
  if (in_run) out.push_back(to_valid_utf8(bytes));
  tokens.swap(out);
}

void strip(const DecoderSpec& d, std::string& t) {
  size_t begin = 0, end = t.size();
  const size_t n = d.content.size();
  if (n == 0) return;
  for (uint32_t i = 0; i < d.start && begin + n <= end && t.compare(begin, n, d.content) == 0; ++i) begin += n;
  for (uint32_t i = 0; i < d.stop && end >= begin + n && t.compare(end - n, n, d.content) == 0; ++i) end -= n;
  t = t.substr(begin, end - begin);
}

}  // namespace

std::string clean_up_tokenization(std::string text) {
  static const std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (auto [from, to] : kRules) replace_all(text, from, to);
  return text;
}

void apply_decoder(const DecoderSpec& d, std::vector<std::string>& tokens) {
  switch (d.kind) {
    case DecoderSpec::Kind::Replace:
      for (std::string& t : tokens) replace(d, t);
      break;
    case DecoderSpec::Kind::ByteFallback: byte_fallback(tokens); break;
    case DecoderSpec::Kind::Fuse: {
      std::string all;
      for (const std::string& t : tokens) all += t;
      tokens.assign(1, std::move(all));
      break;
    }
    case DecoderSpec::Kind::Strip:
      for (std::string& t : tokens) strip(d, t);
      break;
    case DecoderSpec::Kind::WordPiece:
      for (size_t i = 0; i < tokens.size(); ++i) {
        std::string& t = tokens[i];
        if (i > 0) t = t.starts_with(d.prefix) ? t.substr(d.prefix.size()) : " " + t;
        if (d.cleanup) t = clean_up_tokenization(std::move(t));
      }
      break;
    case DecoderSpec::Kind::Metaspace:
      for (size_t i = 0; i < tokens.size(); ++i) {
        replace_all(tokens[i], d.content, " ");
        if (i == 0 && d.strip_first_space && tokens[i].starts_with(' ')) tokens[i].erase(0, 1);
      }
      break;
  }
}

}  // namespace skiff::text
