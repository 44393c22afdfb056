#pragma once
/// \file pre_tokenizer_steps.h
/// The pre-tokenizers of a Hugging Face tokenizer.json other than byte-level BPE's: they
/// cut a normalized text into the words the model encodes one by one, as the reference
/// (@lenml/tokenizers, a port of transformers.js) does:
///   - Metaspace: each space becomes `replacement` ("▁"), and `replacement` is put before
///     a word that does not start with it when `prepend_scheme` is "always", or "first"
///     and the text is the first stretch of the input (not after an added token);
///     `split` cuts before every `replacement` (Hugging Face's behaviour: the reference
///     ignores `split`). A missing `add_prefix_space` means true, as in Hugging Face's
///     files since 0.19 (the reference then never prepends; the golden files state it).
///   - BertPreTokenizer: trims white space, then cuts runs of letters/digits/symbols
///     apart at white space (dropped) and at each punctuation character (kept alone):
///     \p{P} and the ASCII symbols !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~.
///   - Whitespace: runs of ASCII word characters [A-Za-z0-9_] and runs of everything
///     else but white space (the reference's `\w+|[^\w\s]+`).
///   - WhitespaceSplit: runs of non-white-space.
///   - Split: a regex or literal, as for byte-level BPE (split_regex.h).
///   - UnicodeWords (skiff's own type, not Hugging Face's): ICU's word boundaries (UAX #29,
///     with ICU's dictionaries for scripts written without spaces: Chinese, Japanese,
///     Thai, Lao, Khmer, Burmese), optionally tailored by `locale`; segments that are only
///     white space are dropped. For models whose words should be dictionary words.
/// White space is JavaScript's `\s` throughout (unicode.h).

#include <memory>
#include <string>
#include <vector>

#include "framework/text/normalizer_steps.h"
#include "framework/text/split_regex.h"

namespace skiff::text {

/// One pre-tokenization step (tokenizer.json `pre_tokenizer`, flattened out of Sequence).
struct PreTokenizerSpec {
  enum class Kind { Metaspace, Bert, Whitespace, WhitespaceSplit, Split, UnicodeWords };
  enum class Prepend { Always, First, Never };
  Kind kind = Kind::Metaspace;
  std::string replacement = "\xE2\x96\x81";  ///< Metaspace: "▁"
  Prepend prepend = Prepend::Always;          ///< Metaspace
  bool split = true;                          ///< Metaspace
  std::shared_ptr<const SplitRegex> regex{};  ///< Split
  SplitBehavior behavior = SplitBehavior::Isolated;  ///< Split
  bool invert = false;                               ///< Split
  std::string locale;                                ///< UnicodeWords: ICU locale id ("" = root)
};

/// A normalized text and the words cut from it so far (byte ranges of `text.text`).
struct Words {
  AlignedText text;
  std::vector<Span> spans;
};

/// Applies `step` to every word of `words`. `first_section`: the text is the input's
/// first stretch (for Metaspace's "first" scheme).
void apply_pre_tokenizer(const PreTokenizerSpec& step, Words& words, bool first_section);

}  // namespace skiff::text
