#include "suites/nlp/llama/streamer.h"

#include "framework/text/unicode.h"

namespace skiff::nlp {

std::string Utf8Streamer::push(std::string_view bytes) {
  pending_.append(bytes);
  // Hold back a trailing lead byte whose character is not complete yet. Splitting at a
  // lead byte keeps U+FFFD replacement identical to decoding everything at once: a
  // WHATWG decoder ends any open sequence at a non-continuation byte.
  size_t n = pending_.size(), hold = n;
  for (size_t i = n; i > 0 && n - i < 4; --i) {
    auto c = uint8_t(pending_[i - 1]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t need = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 1;
    if (need > n - (i - 1)) hold = i - 1;
    break;
  }
  std::string out = text::to_valid_utf8(std::string_view(pending_).substr(0, hold));
  pending_.erase(0, hold);
  return out;
}

std::string Utf8Streamer::flush() {
  std::string out = text::to_valid_utf8(pending_);
  pending_.clear();
  return out;
}

std::string TokenStreamer::push(int32_t id) {
  for (const text::AddedToken& t : tokenizer_.config().added_tokens) {
    if (t.id != id) continue;
    if (t.special && skip_special_) return {};
    return utf8_.flush() + t.content;
  }
  std::string bytes;
  tokenizer_.model().append_token_bytes(id, bytes);
  return utf8_.push(bytes);
}

DecodeStreamer::DecodeStreamer(const text::Tokenizer& tokenizer, bool skip_special_tokens, std::vector<int32_t> context)
    : tokenizer_(tokenizer), skip_special_(skip_special_tokens), ids_(std::move(context)), context_ids_(ids_.size()) {
  emitted_ = ids_.empty() ? 0 : tokenizer_.decode(ids_, skip_special_).size();
}

std::string DecodeStreamer::push(int32_t id) {
  ids_.push_back(id);
  std::string text = tokenizer_.decode(ids_, skip_special_);
  size_t ready = text.size();
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  while (ready >= emitted_ + kReplacement.size() &&
         std::string_view(text).substr(ready - kReplacement.size(), kReplacement.size()) == kReplacement)
    ready -= kReplacement.size();
  if (ready <= emitted_) return {};
  std::string out = text.substr(emitted_, ready - emitted_);
  emitted_ = ready;
  return out;
}

std::string DecodeStreamer::flush() {
  std::string text = tokenizer_.decode(ids_, skip_special_);
  std::string out = text.size() > emitted_ ? text.substr(emitted_) : std::string();
  ids_.resize(context_ids_);
  emitted_ = ids_.empty() ? 0 : tokenizer_.decode(ids_, skip_special_).size();
  return out;
}

std::string continuation_text(const text::Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                              const std::vector<int32_t>& generated, bool skip_special_tokens) {
  std::vector<int32_t> all = prompt;
  all.insert(all.end(), generated.begin(), generated.end());
  const std::string head = tokenizer.decode(prompt, skip_special_tokens);
  std::string text = tokenizer.decode(all, skip_special_tokens);
  // A prompt ending inside a character decodes to U+FFFD that the whole text completes.
  return text.starts_with(head) ? text.substr(head.size()) : tokenizer.decode(generated, skip_special_tokens);
}

TextStreamer::TextStreamer(const text::Tokenizer& tokenizer, std::vector<int32_t> context)
    : decode_(tokenizer, true, std::move(context)) {
  if (auto* bpe = dynamic_cast<const text::BpeTokenizer*>(&tokenizer)) bpe_ = std::make_unique<TokenStreamer>(*bpe);
}

}  // namespace skiff::nlp
