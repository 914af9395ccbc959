// Non-negative least squares: min ||A x - b||_2 subject to x >= 0, by the
// active-set method of Lawson and Hanson (1974, ch. 23). Eigen has none.
#pragma once
#include <Eigen/Dense>

namespace trainplan::numerics {

// The problem is solved with every column of A and b scaled to unit norm
// (x >= 0 is unchanged by positive column scales), so that the tolerance is
// relative: a small coefficient of a large column (seconds per sample
// against samples in the tens of thousands) is not taken for zero.
struct NnlsOptions {
  int max_iterations = 0;  // 0: 3 * columns, as Lawson-Hanson suggest
  // In the scaled problem: the least gradient with which a variable enters,
  // and the value under which a variable leaves. 0: 10 * eps * max(rows, cols).
  double tolerance = 0;
};

struct NnlsResult {
  Eigen::VectorXd x;      // the solution, every entry >= 0
  double residual = 0;    // ||A x - b||_2
  int iterations = 0;
  bool converged = true;  // false if max_iterations was reached
};

// Throws std::invalid_argument if A and b disagree in rows or hold NaN/Inf.
NnlsResult nnls(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, const NnlsOptions& opts = {});

}  // namespace trainplan::numerics
