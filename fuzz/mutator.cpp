#include "mutator.h"

#include <algorithm>
#include <cctype>

namespace trainplan::fuzz {

namespace {

// Numbers that break naive conversions: out of int and long range, not
// finite, negative, zero, tiny, fractional where integers are expected.
const char* const kNumbers[] = {"NaN", "nan", "inf", "-inf", "Infinity", "-1", "0", "-0", "1e308", "-1e308",
                                "1e-320", "4.9e-324", "2147483647", "2147483648", "-2147483649", "4294967296",
                                "9223372036854775807", "9223372036854775808", "18446744073709551616",
                                "99999999999999999999", "1e19", "1e10", "0.5", "1.5", "1e400", "0x10", "1e", "",
                                "  7  ", "1,2", "3.0", "1000000000", "1073741824", "65536"};

// Tokens of the formats: separators, comments, quoting, JSON structure.
const char* const kTokens[] = {",", ",,", "\n", "\r\n", "\n\n", "#", "# trainplan: ", "=", " ", "\t", "\"", "'",
                               "{", "}", "[", "]", ":", "null", "true", "false", "\\u0000", "\\", "\xff", "\xc3",
                               "\0", "[[[[[[[[", "{\"\":", "-", "."};

}  // namespace

Mutator::Mutator(uint64_t seed, std::vector<std::string> corpus, std::vector<std::string> dictionary, size_t max_len)
    : state_(seed), corpus_(std::move(corpus)), dictionary_(std::move(dictionary)), max_len_(max_len) {
  if (corpus_.empty()) corpus_.push_back("");
  for (const char* t : kTokens) dictionary_.push_back(t[0] == '\0' ? std::string(1, '\0') : t);
}

uint64_t Mutator::rand() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

size_t Mutator::below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(rand() % n); }

std::string Mutator::next() {
  std::string s = corpus_[below(corpus_.size())];
  const size_t n = 1 + below(6);
  for (size_t i = 0; i < n; ++i) mutate_once(s);
  if (s.size() > max_len_) s.resize(max_len_);
  return s;
}

void Mutator::mutate_once(std::string& s) {
  switch (below(12)) {
    case 0:  // flip a bit
      if (!s.empty()) s[below(s.size())] ^= static_cast<char>(1u << below(8));
      break;
    case 1: {  // random bytes, printable more often than not
      const size_t at = below(s.size() + 1), n = 1 + below(8);
      std::string ins;
      for (size_t i = 0; i < n; ++i) ins.push_back(static_cast<char>(below(4) ? 32 + below(95) : below(256)));
      s.insert(at, ins);
      break;
    }
    case 2:  // delete a range
      if (!s.empty()) {
        const size_t at = below(s.size());
        s.erase(at, 1 + below(std::min<size_t>(s.size() - at, 32)));
      }
      break;
    case 3:  // duplicate a range in place
      if (!s.empty()) {
        const size_t at = below(s.size()), n = 1 + below(std::min<size_t>(s.size() - at, 64));
        s.insert(at, s.substr(at, n));
      }
      break;
    case 4: {  // splice: our head, another entry's tail
      const std::string& o = corpus_[below(corpus_.size())];
      s = s.substr(0, below(s.size() + 1)) + o.substr(below(o.size() + 1));
      break;
    }
    case 5:  // truncate
      s.resize(below(s.size() + 1));
      break;
    case 6:
    case 7:  // a token
      s.insert(below(s.size() + 1), dictionary_[below(dictionary_.size())]);
      break;
    case 8:
    case 9:
      replace_number(s);
      break;
    case 10:
      edit_lines(s);
      break;
    default:
      retype_string(s);
      break;
  }
}

void Mutator::retype_string(std::string& s) {
  // The n-th "..." for a random n, replaced by a value of another JSON type.
  static const char* const kValues[] = {"0", "-1", "1e400", "[]", "[1]", "{}", "null", "true", "\"\""};
  std::vector<size_t> quotes;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == '"') quotes.push_back(i);
  if (quotes.size() < 2) return;
  const size_t k = below(quotes.size() / 2) * 2;
  s.replace(quotes[k], quotes[k + 1] - quotes[k] + 1, kValues[below(std::size(kValues))]);
}

void Mutator::replace_number(std::string& s) {
  // The n-th run of digits (with a sign, point and exponent), for a random n.
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t i = 0; i < s.size();) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      size_t a = i;
      if (a > 0 && s[a - 1] == '-') --a;
      while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == 'e' ||
                              s[i] == 'E' || ((s[i] == '-' || s[i] == '+') && (s[i - 1] == 'e' || s[i - 1] == 'E'))))
        ++i;
      runs.emplace_back(a, i - a);
    } else {
      ++i;
    }
  }
  const std::string num = kNumbers[below(std::size(kNumbers))];
  if (runs.empty()) {
    s.insert(below(s.size() + 1), num);
    return;
  }
  const auto [at, n] = runs[below(runs.size())];
  s.replace(at, n, num);
}

void Mutator::edit_lines(std::string& s) {
  std::vector<std::string> lines;
  size_t a = 0;
  for (size_t b; (b = s.find('\n', a)) != std::string::npos; a = b + 1) lines.push_back(s.substr(a, b - a + 1));
  if (a < s.size()) lines.push_back(s.substr(a));
  if (lines.empty()) return;
  const size_t i = below(lines.size()), j = below(lines.size());
  switch (below(4)) {
    case 0: lines.insert(lines.begin() + static_cast<long>(i), lines[j]); break;
    case 1: lines.erase(lines.begin() + static_cast<long>(i)); break;
    case 2: std::swap(lines[i], lines[j]); break;
    default:  // many copies of one line: row-count and size limits
      lines.insert(lines.begin() + static_cast<long>(i), 1 + below(200), lines[j]);
      break;
  }
  s.clear();
  for (const auto& l : lines) s += l;
}

}  // namespace trainplan::fuzz
