// Serves the embedded web viewer: "/" is the single page (client-side hash routing, so no other
// page paths exist) and "/static/<path>" its scripts and styles.
#pragma once

namespace httplib {
class Server;
}

namespace gpuspy::collector {

void AddWebUiRoutes(httplib::Server* server);

}  // namespace gpuspy::collector
