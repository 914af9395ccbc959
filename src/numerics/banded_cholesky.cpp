#include "numerics/banded_cholesky.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace trainplan::numerics {

BandedCholesky::BandedCholesky(size_t n, size_t half_band)
    : n_(n), w_(std::min(half_band, n ? n - 1 : 0)), band_(n * (w_ + 1), 0.0) {}

void BandedCholesky::add(size_t i, size_t j, double v) {
  if (i < j) std::swap(i, j);
  assert(i - j <= w_);
  at(i, j) += v;
}

bool BandedCholesky::factor() {
  for (size_t i = 0; i < n_; ++i) {
    const size_t lo = i > w_ ? i - w_ : 0;
    const double* row_i = band_.data() + i * (w_ + 2);  // (i, k) at row_i[-k]
    for (size_t j = lo; j <= i; ++j) {
      double s = at(i, j);
      const size_t klo = std::max(lo, j > w_ ? j - w_ : 0);
      const double* row_j = band_.data() + j * (w_ + 2);
      for (size_t k = klo; k < j; ++k) s -= row_i[-static_cast<long>(k)] * row_j[-static_cast<long>(k)];
      if (j == i) {
        if (!(s > 0)) return false;
        at(i, i) = std::sqrt(s);
      } else {
        at(i, j) = s / at(j, j);
      }
    }
  }
  return true;
}

std::vector<double> BandedCholesky::solve(std::vector<double> b) const {
  for (size_t i = 0; i < n_; ++i) {  // L y = b
    const size_t lo = i > w_ ? i - w_ : 0;
    for (size_t k = lo; k < i; ++k) b[i] -= at(i, k) * b[k];
    b[i] /= at(i, i);
  }
  for (size_t i = n_; i-- > 0;) {  // L^T x = y
    const size_t hi = std::min(n_ - 1, i + w_);
    for (size_t k = i + 1; k <= hi; ++k) b[i] -= at(k, i) * b[k];
    b[i] /= at(i, i);
  }
  return b;
}

void BandedCholesky::invert_band() {
  // With A = L L^T and S = A^{-1}: S = L^{-T} L^{-1}, so for j >= i
  //   S(i, j) = [i == j] / L(i,i)^2 - sum_{k = i+1..i+w} (L(k,i) / L(i,i)) S(k, j),
  // which needs only entries of S within the band below and right of (i, i).
  inv_.assign(n_ * (2 * w_ + 1), 0.0);
  std::vector<double> q(w_ + 1);  // L(k, i) / L(i, i) for k = i+1..i+w, the same quotients in every j
  for (size_t i = n_; i-- > 0;) {
    const double d = at(i, i);
    const size_t hi = std::min(n_ - 1, i + w_);
    for (size_t k = i + 1; k <= hi; ++k) q[k - i] = at(k, i) / d;
    for (size_t j = hi + 1; j-- > i;) {
      double s = j == i ? 1.0 / (d * d) : 0.0;
      // S(k, j) = S(j, k), k = i+1..hi in increasing order along row j.
      const double* row = &inv(j, i + 1);
      for (size_t k = i + 1; k <= hi; ++k) s -= q[k - i] * row[k - i - 1];
      inv(i, j) = inv(j, i) = s;
    }
  }
}

double BandedCholesky::inverse_quadratic_banded(const std::vector<std::pair<int, double>>& x) const {
  double sum = 0;
  for (auto [a, va] : x)
    for (auto [b, vb] : x) sum += va * vb * inv(static_cast<size_t>(a), static_cast<size_t>(b));
  return sum;
}

}  // namespace trainplan::numerics
