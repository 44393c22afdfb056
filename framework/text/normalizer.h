#pragma once
/// \file normalizer.h
/// Unicode normalization (ICU) that remembers where each output byte came from, so
/// token offsets can point into the caller's text.

#include <string>
#include <string_view>
#include <vector>

#include "framework/text/split_regex.h"

namespace skiff::text {

/// Unicode normalization forms (UAX #15). `None` leaves text unchanged.
enum class NormalizationForm { None, NFC, NFD, NFKC, NFKD };

/// Parses "NFC", "NFD", "NFKC" or "NFKD" (tokenizer.json's normalizer types).
/// \throws ValueError for any other name.
NormalizationForm normalization_form_from_name(std::string_view name);

/// A normalized text and its alignment with the input.
struct NormalizedText {
  std::string text;
  /// Empty when `text` is byte-for-byte the input. Otherwise one entry per byte of
  /// `text`: the input byte range it came from. Bytes in an unchanged stretch map to
  /// themselves; all bytes of a changed stretch map to the whole input stretch (the
  /// span of the one change ICU recorded, e.g. a base letter and its combining accent).
  std::vector<Span> alignment;
};

/// Normalizes valid UTF-8 `text` to `form`. A text that is already normalized is
/// returned as is, without an alignment (the common case, checked quickly).
/// \throws InternalError if ICU fails (it does not for valid UTF-8).
NormalizedText normalize(std::string_view text, NormalizationForm form);

}  // namespace skiff::text
