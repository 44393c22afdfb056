#pragma once
/// \file base64.h
/// Base64 (RFC 4648) for the places bytes travel inside text: TF.js string
/// attributes, images in `skiff serve` requests and responses.

#include <string>
#include <string_view>

namespace skiff::io {

/// Standard alphabet with '=' padding.
std::string base64_encode(std::string_view bytes);

/// Decodes the standard or the URL-safe alphabet ('-', '_'); padding is optional,
/// and ASCII whitespace (line breaks of MIME-wrapped text) is skipped.
/// \throws ValueError naming `what` and the offset of the first character that is
/// not base64, or a length no encoder produces.
std::string base64_decode(std::string_view text, std::string_view what);

}  // namespace skiff::io
