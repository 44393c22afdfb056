#pragma once
/// \file normalizer_steps.h
/// The normalizers of a Hugging Face tokenizer.json other than byte-level BPE's, applied
/// to a text that remembers, for each of its bytes, the input bytes it came from (so
/// token offsets point into the caller's text). Each step does what the reference
/// (@lenml/tokenizers, a port of transformers.js) does:
///   - NFC/NFD/NFKC/NFKD: ICU (normalizer.h);
///   - Replace: every match of a literal string or regex becomes `content`;
///   - Prepend: `content` is put before the text;
///   - Lowercase: JavaScript's String.toLowerCase (full Unicode mappings, final sigma);
///   - StripAccents: removes every mark (\p{M}), without decomposing first, as the reference;
///   - Strip: removes JavaScript white space at the start and/or the end;
///   - BertNormalizer: clean_text (drops U+0000, U+FFFD and control/format/private-use
///     characters other than \t \n \r; white space becomes " "), handle_chinese_chars
///     (a space either side of each CJK ideograph of the Basic Multilingual Plane: the
///     reference walks UTF-16 units, so ideographs above U+FFFF get none), lowercase, and
///     strip_accents (NFD, then non-spacing marks removed; by default when lowercasing).

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/text/normalizer.h"
#include "framework/text/split_regex.h"

namespace skiff::text {

/// A text and, when tracked, one input byte range per byte of it.
struct AlignedText {
  std::string text;
  std::vector<Span> align;  ///< empty unless `tracked`
  bool tracked = false;

  /// `text` itself, byte i coming from input byte base + i.
  static AlignedText identity(std::string_view text, uint32_t base, bool track);
  /// Appends `bytes`, all coming from the input range `from`.
  void append(std::string_view bytes, Span from);
  /// The input range of text bytes [begin, end) (an empty range for text added by a step).
  Span input_span(uint32_t begin, uint32_t end) const;
};

/// One normalization step (tokenizer.json `normalizer`, flattened out of Sequence).
struct NormalizerStep {
  enum class Kind { Unicode, Replace, Prepend, Lowercase, StripAccents, Strip, Bert };
  Kind kind = Kind::Unicode;
  NormalizationForm form = NormalizationForm::None;  ///< Unicode
  std::shared_ptr<const SplitRegex> pattern{};       ///< Replace: a regex, or null for `literal`
  std::string literal{};                             ///< Replace: the string to replace (no regex)
  std::string content{};                             ///< Replace: the replacement; Prepend: the prefix
  bool strip_left = false, strip_right = false;      ///< Strip
  bool clean_text = true, handle_chinese_chars = true, lowercase = true;  ///< Bert
  std::optional<bool> strip_accents{};               ///< Bert: unset follows `lowercase`
};

/// Applies `step` to `t` (valid UTF-8), keeping the alignment when tracked.
void apply_normalizer(const NormalizerStep& step, AlignedText& t);

/// JavaScript's String.prototype.toLowerCase on valid UTF-8 (exposed for tests).
std::string js_lowercase(std::string_view text);

}  // namespace skiff::text
