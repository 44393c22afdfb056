#include "framework/text/pre_tokenizer_steps.h"

#include <unicode/brkiter.h>
#include <unicode/uchar.h>
#include <unicode/utext.h>

#include <map>
#include <memory>

#include "framework/core/error.h"
#include "framework/text/unicode.h"

namespace skiff::text {

namespace {

bool is_bert_punct(char32_t c) {
  if ((c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E))
    return true;
  return c >= 0x80 && u_ispunct(UChar32(c));
}

bool is_ascii_word(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Cuts `span` of `text` into runs of code points of the same class; class 0 (white
// space) is dropped; a class with `alone` set makes each of its code points its own word.
template <typename Classify>
void cut_runs(const std::string& text, Span span, std::vector<Span>& out, Classify classify, int alone = -1) {
  int current = 0;
  for (uint32_t pos = span.begin; pos < span.end;) {
    const uint32_t start = pos;
    size_t p = pos;
    int cls = classify(next_code_point(text, p));
    pos = uint32_t(p);
    if (cls == 0) {
      current = 0;
      continue;
    }
    if (cls == current && cls != alone) out.back().end = pos;
    else out.push_back({start, pos});
    current = cls;
  }
}

void metaspace(const PreTokenizerSpec& s, Words& w, bool first_section) {
  const bool prepend =
      s.prepend == PreTokenizerSpec::Prepend::Always || (s.prepend == PreTokenizerSpec::Prepend::First && first_section);
  AlignedText out;
  out.tracked = w.text.tracked;
  std::vector<Span> spans;
  const std::string& in = w.text.text;
  for (const Span& word : w.spans) {
    const uint32_t begin = uint32_t(out.text.size());
    std::string_view text(in.data() + word.begin, word.end - word.begin);
    const bool starts_with_space = text.starts_with(' ') || text.starts_with(s.replacement);
    if (prepend && !starts_with_space) {
      Span at = out.tracked ? w.text.input_span(word.begin, word.begin) : Span{};
      out.append(s.replacement, at);
    }
    for (uint32_t i = word.begin; i < word.end; ++i) {
      if (in[i] == ' ') {
        out.append(s.replacement, out.tracked ? w.text.align[i] : Span{});
      } else {
        out.text.push_back(in[i]);
        if (out.tracked) out.align.push_back(w.text.align[i]);
      }
    }
    const uint32_t end = uint32_t(out.text.size());
    if (!s.split) {
      spans.push_back({begin, end});
      continue;
    }
    // Each replacement starts a word (Hugging Face's MergedWithNext).
    uint32_t start = begin;
    for (size_t at = out.text.find(s.replacement, begin); at != std::string::npos && at < end;
         at = out.text.find(s.replacement, at + s.replacement.size())) {
      if (at > start) spans.push_back({start, uint32_t(at)});
      start = uint32_t(at);
    }
    if (end > start) spans.push_back({start, end});
  }
  w.text = std::move(out);
  w.spans = std::move(spans);
}

// ICU's word boundaries in `span`, read straight from the UTF-8 text (UText's native
// indices are byte offsets). Break iterators are not thread-safe and costly to create:
// one per thread and locale.
void unicode_words(const std::string& locale, const std::string& text, Span span, std::vector<Span>& out) {
  thread_local std::map<std::string, std::unique_ptr<icu::BreakIterator>> iterators;
  std::unique_ptr<icu::BreakIterator>& it = iterators[locale];
  UErrorCode status = U_ZERO_ERROR;
  if (!it) {
    it.reset(icu::BreakIterator::createWordInstance(icu::Locale(locale.c_str()), status));
    SKIFF_CHECK_T(InternalError, U_SUCCESS(status) && it, "UnicodeWords: ICU has no word break iterator for '{}': {}",
                  locale, u_errorName(status));
  }
  UText* ut = utext_openUTF8(nullptr, text.data() + span.begin, int64_t(span.end - span.begin), &status);
  SKIFF_CHECK_T(InternalError, U_SUCCESS(status), "UnicodeWords: utext_openUTF8 failed: {}", u_errorName(status));
  it->setText(ut, status);
  int32_t start = it->first();
  for (int32_t end = it->next(); end != icu::BreakIterator::DONE; start = end, end = it->next()) {
    const uint32_t b = span.begin + uint32_t(start), e = span.begin + uint32_t(end);
    bool blank = true;
    for (size_t p = b; p < e && blank;) blank = is_js_space(next_code_point(text, p));
    if (!blank) out.push_back({b, e});
  }
  utext_close(ut);
}

}  // namespace

void apply_pre_tokenizer(const PreTokenizerSpec& step, Words& w, bool first_section) {
  using Kind = PreTokenizerSpec::Kind;
  if (step.kind == Kind::Metaspace) {
    metaspace(step, w, first_section);
    return;
  }
  std::vector<Span> out, matches;
  const std::string& text = w.text.text;
  for (const Span& word : w.spans) {
    switch (step.kind) {
      case Kind::Bert:  // 1: word characters, 2: punctuation (one per word)
        cut_runs(text, word, out, [](char32_t c) { return is_js_space(c) ? 0 : is_bert_punct(c) ? 2 : 1; }, 2);
        break;
      case Kind::Whitespace:
        cut_runs(text, word, out, [](char32_t c) { return is_js_space(c) ? 0 : is_ascii_word(c) ? 1 : 2; });
        break;
      case Kind::WhitespaceSplit:
        cut_runs(text, word, out, [](char32_t c) { return is_js_space(c) ? 0 : 1; });
        break;
      case Kind::Split:
        split_piece(*step.regex, step.behavior, step.invert, text, word, matches, out);
        break;
      case Kind::UnicodeWords:
        unicode_words(step.locale, text, word, out);
        break;
      case Kind::Metaspace: break;
    }
  }
  w.spans = std::move(out);
}

}  // namespace skiff::text
