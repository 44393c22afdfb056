#pragma once
/// \file split_regex.h
/// The regexes that pre-tokenizers split text with, with ECMAScript `u`-mode
/// semantics (the JavaScript reference tokenizers: gpt-3-encoder, transformers.js).
///
/// Two engines:
///   - hand-written matchers for the patterns BPE tokenizers actually ship: GPT-2's
///       's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
///     and the cl100k family (GPT-4, Llama 3 with `\p{N}{1,3}`; Qwen2/2.5/3 with `\p{N}`):
///       (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
///     They decide each alternative from the character classes of unicode.h, replaying
///     the backtracking a regex engine would do, in one pass over the text; they are
///     tested against the ICU engine below on the golden corpus.
///   - ICU's regex engine (icu::RegexPattern) for any other pattern. The pattern is
///     rewritten first so that ICU means what JavaScript means: `\s` and `\S` become
///     explicit ECMAScript white-space sets, and the contraction group `(?i:'s|...|'d)`
///     becomes ASCII-only case alternatives, as transformers.js rewrites it (ICU would
///     fold cases over all of Unicode, e.g. match U+017F LATIN SMALL LETTER LONG S).
///
/// A match is a byte range of the UTF-8 text. Empty matches are never reported.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace skiff::text {

/// A byte range [begin, end) of a text.
struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool operator==(const Span&) const = default;
};

/// The GPT-2 pre-tokenizer pattern (also the ByteLevel pre-tokenizer's `use_regex`).
inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

/// A compiled split pattern. Immutable after construction; find_all() may be
/// called from several threads at once.
class SplitRegex {
 public:
  /// Which engine runs the pattern.
  enum class Engine { Auto, Icu };

  /// Compiles `pattern` (a regex in the syntax of tokenizer.json files). With Auto, a
  /// known pattern gets its hand-written matcher and anything else ICU.
  /// \throws ValueError naming the pattern and ICU's complaint when ICU cannot compile it.
  explicit SplitRegex(std::string pattern, Engine engine = Engine::Auto);
  ~SplitRegex();
  SplitRegex(SplitRegex&&) noexcept;
  SplitRegex& operator=(SplitRegex&&) noexcept;

  /// Appends the leftmost, non-overlapping, non-empty matches in `text` (valid UTF-8)
  /// to `out`, as byte ranges offset by `base`.
  void find_all(std::string_view text, std::vector<Span>& out, uint32_t base = 0) const;

  /// The pattern as given.
  const std::string& pattern() const { return pattern_; }
  /// true when a hand-written matcher runs the pattern.
  bool hand_written() const { return kind_ != Kind::Icu; }

 private:
  enum class Kind { Gpt2, Cl100k, Icu };
  struct IcuState;
  std::string pattern_;
  Kind kind_ = Kind::Icu;
  int max_digits_ = 1;  // Cl100k: the n of \p{N}{1,n}
  std::unique_ptr<IcuState> icu_;
};

/// The pattern rewritten for ICU as described in the file comment (exposed for tests).
std::string js_pattern_for_icu(std::string_view pattern);

/// What a Split step does with the pieces its regex matches (tokenizer.json `behavior`).
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

/// One Split pre-tokenization step on `piece` of `work`, Hugging Face's way: the regex's
/// matches and the gaps between them tile the piece (`invert` swaps the two roles), and
/// `behavior` says which pieces stay apart. Appends the resulting ranges of `work` to
/// `out`; `matches` is scratch space.
void split_piece(const SplitRegex& regex, SplitBehavior behavior, bool invert, std::string_view work, Span piece,
                 std::vector<Span>& matches, std::vector<Span>& out);

}  // namespace skiff::text
