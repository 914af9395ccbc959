// Whether a host name or address the server may bind is one only this
// machine reaches.
#pragma once
#include <string>

namespace trainplan::server {

// True when every address `host` resolves to (as the server binds it, by
// getaddrinfo with AI_PASSIVE) is loopback: 127.0.0.0/8, ::1, or 127.x.y.z
// mapped into IPv6. False for an empty host, one that does not resolve, and
// any wildcard ("0.0.0.0", "::").
bool is_loopback_host(const std::string& host);

}  // namespace trainplan::server
