#include "suites/ocr/ctc_decode.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include "framework/core/error.h"

namespace skiff::ocr {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is invalid.
std::size_t utf8_sequence_length(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t len;
  unsigned min_cp;
  unsigned cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; min_cp = 0x80; }
  else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; min_cp = 0x800; }
  else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; min_cp = 0x10000; }
  else return 0;
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

// numpy's pairwise summation of float32 (loops_utils.h: blocks of 8 partial
// sums up to 128 elements, halves beyond), so scores match np.mean bit for bit.
float pairwise_sum(const float* a, std::size_t n) {
  if (n < 8) {
    float res = 0.0f;
    for (std::size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    float r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    std::size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

}  // namespace

Charset::Charset(std::vector<std::string> entries, bool use_space_char) {
  chars_.reserve(entries.size() + 2);
  chars_.emplace_back();  // CTC blank
  for (auto& e : entries) chars_.push_back(std::move(e));
  if (use_space_char) chars_.emplace_back(" ");
  for (std::size_t i = chars_.size(); i-- > 1;)
    if (chars_[i] == " ") {
      space_ = int(i);
      break;
    }
}

Charset Charset::load(const std::filesystem::path& dict_path, bool use_space_char) {
  std::ifstream in(dict_path, std::ios::binary);
  if (!in) SKIFF_THROW(IoError, "ocr::Charset: cannot open dictionary file {}", dict_path.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) SKIFF_THROW(IoError, "ocr::Charset: cannot read dictionary file {}", dict_path.string());
  const std::string data = buf.str();
  if (data.empty())
    SKIFF_THROW(IoError, "ocr::Charset: dictionary file {} is empty; expected one character per line",
                dict_path.string());

  std::vector<std::string> entries;
  std::size_t start = 0;
  while (start < data.size()) {
    std::size_t end = data.find('\n', start);
    if (end == std::string::npos) end = data.size();
    std::string line = data.substr(start, end - start);
    for (std::size_t i = 0; i < line.size();) {
      const std::size_t len = utf8_sequence_length(line, i);
      if (len == 0)
        SKIFF_THROW(IoError, "ocr::Charset: dictionary file {} is not valid UTF-8 at line {}", dict_path.string(),
                    entries.size() + 1);
      i += len;
    }
    const std::size_t first = line.find_first_not_of("\r\n");
    line = first == std::string::npos ? std::string() : line.substr(first, line.find_last_not_of("\r\n") - first + 1);
    entries.push_back(std::move(line));
    start = end + 1;
  }
  return Charset(std::move(entries), use_space_char);
}

const std::string& Charset::at(std::size_t i) const {
  SKIFF_CHECK_INDEX(i < chars_.size(), "ocr::Charset: expected a class index below {}, got {}", chars_.size(), i);
  return chars_[i];
}

CtcAlignment ctc_greedy_align(const float* probs, int timesteps, int classes, const Charset& charset) {
  SKIFF_CHECK(timesteps >= 0, "ocr::ctc_greedy_decode: expected timesteps >= 0, got {}", timesteps);
  SKIFF_CHECK_SHAPE(classes > 0 && std::size_t(classes) == charset.size(),
                    "ocr::ctc_greedy_decode: the recognizer outputs {} classes but the charset has {} "
                    "(blank + dictionary entries + space if use_space_char); use the dictionary the model was "
                    "trained with",
                    classes, charset.size());
  SKIFF_CHECK(probs != nullptr || timesteps == 0, "ocr::ctc_greedy_decode: expected probabilities, got a null pointer");
  CtcAlignment out;
  out.timesteps = timesteps;
  if (charset.space() >= 0) out.space_probs.resize(std::size_t(timesteps));
  int prev = -1;
  for (int t = 0; t < timesteps; ++t) {
    const float* row = probs + std::size_t(t) * std::size_t(classes);
    int best = 0;
    for (int c = 1; c < classes; ++c)
      if (row[c] > row[best]) best = c;
    if (best != prev && best != int(Charset::blank())) out.chars.push_back(CtcChar{best, t, t, row[best]});
    else if (best == prev && best != int(Charset::blank())) out.chars.back().last = t;
    if (charset.space() >= 0) out.space_probs[std::size_t(t)] = row[charset.space()];
    prev = best;
  }
  return out;
}

namespace {

// A printable ASCII character other than the space: letters, digits, punctuation.
// Word spaces are only restored between two of these; Chinese is set without spaces.
bool is_ascii_glyph(const std::string& s) { return s.size() == 1 && s[0] > ' ' && s[0] <= '~'; }

std::string text_with_word_spaces(const CtcAlignment& a, const Charset& charset, const WordSpaceParams& params) {
  const std::size_t n = a.chars.size();
  std::vector<bool> ascii(n);
  for (std::size_t i = 0; i < n; ++i) ascii[i] = is_ascii_glyph(charset.at(std::size_t(a.chars[i].cls)));
  // The line's character pitch: the median distance, in timesteps, between the starts of
  // consecutive ASCII characters. Most neighbours are letters of one word, so a word gap
  // (a letter plus a space) stands out as a distance well above it.
  std::vector<int> pitches;
  for (std::size_t i = 1; i < n; ++i)
    if (ascii[i - 1] && ascii[i]) pitches.push_back(a.chars[i].first - a.chars[i - 1].first);
  float pitch = 0;
  if (!pitches.empty()) {
    std::sort(pitches.begin(), pitches.end());
    const std::size_t m = pitches.size() / 2;
    pitch = pitches.size() % 2 ? float(pitches[m]) : 0.5f * float(pitches[m - 1] + pitches[m]);
  }
  std::string text;
  for (std::size_t i = 0; i < n; ++i) {
    const CtcChar& c = a.chars[i];
    if (i > 0 && ascii[i - 1] && ascii[i]) {
      const CtcChar& p = a.chars[i - 1];
      // The space class's strongest step inside the blank run between the two characters:
      // the recognizer saw a space there even when the blank won the argmax.
      float space_prob = 0;
      const int gap_end = std::min(c.first, int(a.space_probs.size()));  // none without a space class
      for (int t = std::max(p.last + 1, 0); t < gap_end; ++t)
        space_prob = std::max(space_prob, a.space_probs[std::size_t(t)]);
      // A gap much wider than the letters' pitch backs weaker evidence: table columns and
      // letter-spaced headings, where the space class is less sure of itself.
      const int dist = c.first - p.first;
      const bool wide = pitch > 0 && dist >= params.min_gap_steps && float(dist) >= params.min_pitch_ratio * pitch;
      if (space_prob >= params.min_space_prob || (wide && space_prob >= params.weak_space_prob)) text += ' ';
    }
    text += charset.at(std::size_t(c.cls));
  }
  return text;
}

}  // namespace

DecodedText ctc_text(const CtcAlignment& a, const Charset& charset, const std::optional<WordSpaceParams>& word_spaces) {
  DecodedText out;
  if (word_spaces) {
    out.text = text_with_word_spaces(a, charset, *word_spaces);
  } else {
    for (const auto& c : a.chars) out.text += charset.at(std::size_t(c.cls));
  }
  std::vector<float> kept;
  kept.reserve(a.chars.size());
  for (const auto& c : a.chars) kept.push_back(c.prob);
  if (!kept.empty()) out.score = pairwise_sum(kept.data(), kept.size()) / float(kept.size());
  return out;
}

DecodedText ctc_greedy_decode(const float* probs, int timesteps, int classes, const Charset& charset) {
  return ctc_text(ctc_greedy_align(probs, timesteps, classes, charset), charset);
}

}  // namespace skiff::ocr
