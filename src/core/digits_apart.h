// Times (or any figures) printed side by side must not read alike when they
// differ: the fewest digits at which two numbers' texts part.
#pragma once

namespace trainplan {

// The least `digits` from `least` to `most` at which text(a, digits) and
// text(b, digits) differ; `most` when none does (equal numbers).
template <class Text>
int digits_apart(const Text& text, double a, double b, int least, int most) {
  int digits = least;
  while (digits < most && text(a, digits) == text(b, digits)) ++digits;
  return digits;
}

}  // namespace trainplan
