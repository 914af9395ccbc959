// A name as compared where the spelling of separators should not matter:
// lowercase letters and digits only, so "A100 40GB", "a100_40gb" and
// "A100-40GB" are all "a10040gb", and NeMo's "LLAMA3_70B" and "LLAMA3-70B"
// are both "llama370b".
#pragma once
#include <cctype>
#include <string>

namespace trainplan {

inline std::string name_key(const std::string& name) {
  std::string out;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace trainplan
