#include "core/valid_utf8.h"

namespace trainplan {

namespace {

bool continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The length of the valid sequence at the start of `s`, or 0 when there is none.
size_t sequence_length(std::string_view s) {
  const auto c0 = static_cast<unsigned char>(s[0]);
  if (c0 < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the bounds of the second byte (RFC 3629, table 3-7 of Unicode)
  if (c0 >= 0xC2 && c0 <= 0xDF) n = 2;
  else if (c0 == 0xE0) n = 3, lo = 0xA0;
  else if (c0 == 0xED) n = 3, hi = 0x9F;  // no surrogates
  else if (c0 >= 0xE1 && c0 <= 0xEF) n = 3;
  else if (c0 == 0xF0) n = 4, lo = 0x90;
  else if (c0 == 0xF4) n = 4, hi = 0x8F;  // nothing past U+10FFFF
  else if (c0 >= 0xF1 && c0 <= 0xF3) n = 4;
  else return 0;
  if (s.size() < n) return 0;
  const auto c1 = static_cast<unsigned char>(s[1]);
  if (c1 < lo || c1 > hi) return 0;
  for (size_t i = 2; i < n; ++i)
    if (!continuation(static_cast<unsigned char>(s[i]))) return 0;
  return n;
}

}  // namespace

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (const size_t n = sequence_length(text.substr(i)); n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

std::string_view utf8_prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && continuation(static_cast<unsigned char>(text[end]))) --end;
  return text.substr(0, end);
}

std::string_view utf8_suffix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t start = text.size() - max_bytes;
  while (start < text.size() && continuation(static_cast<unsigned char>(text[start]))) ++start;
  return text.substr(start);
}

}  // namespace trainplan
