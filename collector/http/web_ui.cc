#include "collector/http/web_ui.h"

#include <functional>
#include <string>

#include "collector/http/web_assets.h"
#include "httplib.h"
#include "viewer/palette/time_causes.h"

namespace gpuspy::collector {
namespace {

// Assets are compiled into the binary, so they change only when gpuspyd does: the browser may
// keep them but must revalidate (one 304 per file) so an upgraded daemon never runs a stale UI.
void Serve(const WebAsset& asset, const httplib::Request& req, httplib::Response& res) {
  res.set_header("Cache-Control", "no-cache");
  res.set_header("ETag", std::string(asset.etag));
  res.set_header("X-Content-Type-Options", "nosniff");
  if (req.get_header_value("If-None-Match") == asset.etag) {
    res.status = 304;
    return;
  }
  res.set_content(reinterpret_cast<const char*>(asset.data), asset.size, std::string(asset.content_type));
}

}  // namespace

void AddWebUiRoutes(httplib::Server* server) {
  auto index = [](const httplib::Request& req, httplib::Response& res) {
    const WebAsset* page = FindWebAsset("index.html");
    if (page == nullptr) {
      res.status = 404;
      res.set_content("this gpuspyd was built without the web viewer\n", "text/plain");
      return;
    }
    // The page loads only its own scripts and talks only to this daemon.
    res.set_header("Content-Security-Policy",
                   "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
    Serve(*page, req, res);
  };
  // The palette is generated from the C++ table the HTML report draws with (one palette).
  server->Get("/static/js/cause_colors.js", [](const httplib::Request& req, httplib::Response& res) {
    static const std::string* const kModule = new std::string(palette::TimeCausesJsModule());
    static const std::string* const kEtag =
        new std::string("\"palette-" + std::to_string(std::hash<std::string>{}(*kModule)) + "\"");
    const WebAsset asset{"js/cause_colors.js", "text/javascript; charset=utf-8", *kEtag,
                         reinterpret_cast<const unsigned char*>(kModule->data()), kModule->size()};
    Serve(asset, req, res);
  });
  server->Get("/", index);
  server->Get("/index.html", index);
  server->Get(R"(/static/(.+))", [](const httplib::Request& req, httplib::Response& res) {
    const WebAsset* asset = FindWebAsset(req.matches[1].str());
    if (asset == nullptr) {
      res.status = 404;
      res.set_content("no such file\n", "text/plain");
      return;
    }
    Serve(*asset, req, res);
  });
}

}  // namespace gpuspy::collector
