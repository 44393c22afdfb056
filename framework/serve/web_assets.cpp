#include "framework/serve/web_assets.h"

namespace skiff::serve {

const WebAsset* find_web_asset(std::string_view name) {
  for (const auto& a : web_assets())
    if (a.name == name) return &a;
  return nullptr;
}

std::string_view content_type_of(std::string_view name) {
  auto ends = [&](std::string_view ext) {
    return name.size() >= ext.size() && name.substr(name.size() - ext.size()) == ext;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  return "application/octet-stream";
}

}  // namespace skiff::serve
