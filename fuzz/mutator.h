// Seeded random mutation of a seed corpus, for parsers of text formats. The
// same seed, corpus and dictionary give the same inputs in the same order on
// every machine, so an iteration number and a seed reproduce a finding.
//
// Each input is a corpus entry with 1 to 6 mutations stacked: byte flips,
// random bytes inserted, ranges deleted or duplicated, splices with another
// entry, truncation, a token inserted (separators, quotes, brackets, the
// target's dictionary), a number replaced by an awkward one (NaN, inf, -1, 0,
// 1e308, 2^31, 2^63, 20 digits, ...), lines duplicated, dropped or swapped,
// a quoted string replaced by a JSON value of another type.
// Inputs are capped at `max_len` bytes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trainplan::fuzz {

class Mutator {
 public:
  Mutator(uint64_t seed, std::vector<std::string> corpus, std::vector<std::string> dictionary, size_t max_len = 1 << 16);
  std::string next();

 private:
  uint64_t rand();                 // splitmix64: fixed across standard libraries
  size_t below(size_t n);          // uniform enough in [0, n); 0 when n == 0
  void mutate_once(std::string& s);
  void replace_number(std::string& s);
  void edit_lines(std::string& s);
  void retype_string(std::string& s);

  uint64_t state_;
  std::vector<std::string> corpus_, dictionary_;
  size_t max_len_;
};

}  // namespace trainplan::fuzz
