// The web viewer's files (viewer/web/), compiled into gpuspyd so the UI needs no install step and
// always matches the daemon that serves it. The table is generated at build time by
// embed_web_assets.cmake.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace gpuspy::collector {

struct WebAsset {
  std::string_view path;          // relative to viewer/web/: "index.html", "js/app.js"
  std::string_view content_type;  // from the extension
  std::string_view etag;          // quoted SHA-1 of the content
  const unsigned char* data;
  size_t size;
};

std::span<const WebAsset> WebAssets();

// nullptr when no asset has that path.
const WebAsset* FindWebAsset(std::string_view path);

}  // namespace gpuspy::collector
