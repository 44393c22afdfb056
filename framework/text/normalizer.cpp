#include "framework/text/normalizer.h"

#include <unicode/bytestream.h>
#include <unicode/edits.h>
#include <unicode/normalizer2.h>
#include <unicode/stringpiece.h>

#include "framework/core/error.h"

namespace skiff::text {

NormalizationForm normalization_form_from_name(std::string_view name) {
  if (name == "NFC") return NormalizationForm::NFC;
  if (name == "NFD") return NormalizationForm::NFD;
  if (name == "NFKC") return NormalizationForm::NFKC;
  if (name == "NFKD") return NormalizationForm::NFKD;
  SKIFF_THROW(ValueError, "normalizer: expected NFC, NFD, NFKC or NFKD, got '{}'", name);
}

NormalizedText normalize(std::string_view text, NormalizationForm form) {
  NormalizedText result;
  if (form == NormalizationForm::None) {
    result.text = std::string(text);
    return result;
  }
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = nullptr;
  switch (form) {
    case NormalizationForm::NFC: n = icu::Normalizer2::getNFCInstance(status); break;
    case NormalizationForm::NFD: n = icu::Normalizer2::getNFDInstance(status); break;
    case NormalizationForm::NFKC: n = icu::Normalizer2::getNFKCInstance(status); break;
    case NormalizationForm::NFKD: n = icu::Normalizer2::getNFKDInstance(status); break;
    case NormalizationForm::None: break;
  }
  SKIFF_ASSERT(U_SUCCESS(status) && n, "ICU normalizer unavailable: {}", u_errorName(status));
  icu::StringPiece piece(text.data(), int32_t(text.size()));
  if (n->isNormalizedUTF8(piece, status) && U_SUCCESS(status)) {
    result.text = std::string(text);
    return result;
  }
  status = U_ZERO_ERROR;
  icu::StringByteSink<std::string> sink(&result.text, int32_t(text.size()));
  icu::Edits edits;
  n->normalizeUTF8(0, piece, sink, &edits, status);
  SKIFF_ASSERT(U_SUCCESS(status), "ICU normalization failed: {}", u_errorName(status));
  result.alignment.resize(result.text.size());
  icu::Edits::Iterator it = edits.getFineIterator();
  while (it.next(status)) {
    const uint32_t src = uint32_t(it.sourceIndex()), dst = uint32_t(it.destinationIndex());
    if (!it.hasChange()) {
      for (uint32_t k = 0; k < uint32_t(it.oldLength()); ++k) result.alignment[dst + k] = {src + k, src + k + 1};
    } else {
      for (uint32_t k = 0; k < uint32_t(it.newLength()); ++k)
        result.alignment[dst + k] = {src, src + uint32_t(it.oldLength())};
    }
  }
  return result;
}

}  // namespace skiff::text
