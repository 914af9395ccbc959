// Cholesky factorisation of a symmetric positive-definite band matrix, kept
// in band storage. Eigen's dense LLT costs O(n^3) and its sparse solvers
// carry ordering and pattern overhead; a penalised spline fit with a few
// hundred coefficients and a narrow band is solved here in O(n w^2), and the
// band of its inverse, which gives the leave-one-out leverages of sparse
// design rows, in O(n w^2) too.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace trainplan::numerics {

class BandedCholesky {
 public:
  // An n x n matrix whose entries (i, j) are zero for |i - j| > half_band.
  BandedCholesky(size_t n, size_t half_band);

  size_t size() const { return n_; }
  size_t half_band() const { return w_; }
  // Adds v at (i, j) and, for i != j, at (j, i). |i - j| must be <= half_band.
  void add(size_t i, size_t j, double v);
  // Factors in place (A = L L^T). Returns false if A is not positive definite.
  bool factor();
  // Solves A x = b after factor().
  std::vector<double> solve(std::vector<double> b) const;
  // Computes the entries of A^{-1} within the band (Takahashi's recurrence,
  // O(n w^2)), after factor().
  void invert_band();
  // x^T A^{-1} x for a sparse x given as (index, value) pairs whose indices lie
  // within half_band of each other, after invert_band().
  double inverse_quadratic_banded(const std::vector<std::pair<int, double>>& x) const;

 private:
  double& at(size_t i, size_t j) { return band_[index(i, j)]; }  // L's entries: j <= i, i - j <= w
  double at(size_t i, size_t j) const { return band_[index(i, j)]; }
  size_t n_, w_;
  // Where entry (i, j), either side of the diagonal, sits in band storage.
  size_t index(size_t i, size_t j) const { return i >= j ? i * (w_ + 1) + (i - j) : j * (w_ + 1) + (j - i); }
  // Entry (i, j) of A^{-1}, |i - j| <= w, kept on both sides of the
  // diagonal: row i holds (i, i-w) .. (i, i+w), so that the recurrence reads
  // a row's entries in order.
  double& inv(size_t i, size_t j) { return inv_[i * (2 * w_ + 1) + w_ + j - i]; }
  double inv(size_t i, size_t j) const { return inv_[i * (2 * w_ + 1) + w_ + j - i]; }
  std::vector<double> band_;  // row i: entries (i, i), (i, i-1), ..., (i, i-w)
  std::vector<double> inv_;   // A^{-1} within the band, full rows (inv())
};

}  // namespace trainplan::numerics
