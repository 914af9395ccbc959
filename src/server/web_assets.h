// The page `trainplan serve` answers at / (docs/WEB.md): web/'s HTML, script
// and style and the vendored charting library (third_party/uplot/), compiled
// into the binary by cmake/embed_files.cmake, so the page needs neither files
// beside the binary nor a network.
//
//   GET /                the page (web/index.html)
//   GET /web/<name>      each embedded file by its base name
//
// Every other path is the JSON API's (server/service.h).
#pragma once
#include <cstddef>
#include <span>
#include <string_view>

namespace trainplan::server {

struct EmbeddedFile {
  const char* path;  // "/web/<base name>"
  const unsigned char* data;
  size_t size;
};

// Every embedded file (generated at build time).
std::span<const EmbeddedFile> embedded_files();

struct WebAsset {
  std::string_view body;
  const char* content_type;
};

// The asset a GET of `path` answers ("/" is the page), or nullptr when
// `path` names none.
const WebAsset* find_web_asset(std::string_view path);

// The Content-Security-Policy sent with every asset: the page loads and
// calls nothing but this server.
extern const char* const kWebContentSecurityPolicy;

}  // namespace trainplan::server
