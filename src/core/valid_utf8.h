// Text from other programs (a trial's stderr, a line of its output) as UTF-8
// that JSON can carry: nlohmann::json refuses to write a string holding an
// invalid sequence, and a byte-counted cut of valid text may end inside a
// character.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace trainplan {

// `text` with each byte that starts no valid UTF-8 sequence (a stray
// continuation byte, an overlong form, a surrogate, a sequence cut short)
// replaced by U+FFFD. Valid text comes back unchanged.
std::string valid_utf8(std::string_view text);

// The longest prefix of `text` of at most `max_bytes` bytes that does not end
// inside a character, assuming `text` is valid UTF-8.
std::string_view utf8_prefix(std::string_view text, size_t max_bytes);

// The same for the suffix of at most `max_bytes` bytes: it does not start
// inside a character.
std::string_view utf8_suffix(std::string_view text, size_t max_bytes);

}  // namespace trainplan
