#include "server/web_assets.h"

#include <map>
#include <string>

namespace trainplan::server {

namespace {

const char* content_type(std::string_view path) {
  auto ends = [&](std::string_view ext) {
    return path.size() >= ext.size() && path.substr(path.size() - ext.size()) == ext;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  return "text/plain; charset=utf-8";
}

const std::map<std::string, WebAsset, std::less<>>& assets() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, WebAsset, std::less<>>;
    for (const auto& f : embedded_files()) {
      WebAsset a{std::string_view(reinterpret_cast<const char*>(f.data), f.size), content_type(f.path)};
      (*t)[f.path] = a;
      if (std::string_view(f.path) == "/web/index.html") (*t)["/"] = a;
    }
    return t;
  }();
  return *table;
}

}  // namespace

const char* const kWebContentSecurityPolicy =
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'";

const WebAsset* find_web_asset(std::string_view path) {
  const auto& t = assets();
  auto it = t.find(path);
  return it == t.end() ? nullptr : &it->second;
}

}  // namespace trainplan::server
