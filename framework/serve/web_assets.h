#pragma once
/// \file web_assets.h
/// The demo pages `skiff serve` answers at / and /static/ (framework/serve/web/),
/// compiled into the library by cmake/embed_files.cmake: the server reads no files to
/// serve them, so no request can name one.

#include <string_view>
#include <vector>

namespace skiff::serve {

struct WebAsset {
  std::string_view name;   ///< file name: "index.html", "app.js", "style.css"
  std::string_view bytes;
};

const std::vector<WebAsset>& web_assets();

/// The asset named `name`, or null.
const WebAsset* find_web_asset(std::string_view name);

/// Content-Type by extension (.html, .js, .css, .svg, .png; else application/octet-stream).
std::string_view content_type_of(std::string_view name);

}  // namespace skiff::serve
