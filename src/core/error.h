// Errors that trainplan reports to users. Every error caused by input names
// where the input was wrong, so that the user can fix it without guessing.
#pragma once
#include <stdexcept>
#include <string>

namespace trainplan {

// Bad user input: a file, a line and a field when known.
// what() reads "FILE:LINE: column 'FIELD': MESSAGE" (parts that are unknown are left out).
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, long line, std::string field, const std::string& message);
  explicit InputError(const std::string& message) : InputError("", 0, "", message) {}
  const std::string& file() const { return file_; }
  long line() const { return line_; }
  const std::string& field() const { return field_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  long line_;
  std::string field_;
  std::string message_;
};

// A planning problem with no solution: the constraints cannot all hold.
class InfeasibleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A program or resource trainplan relies on failed, not trainplan itself
// (gnuplot could not draw a chart): a failure (exit 1) said as what failed,
// not as an internal error.
class ExternalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Process exit codes used by the CLI, documented in the README.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,     // an internal or unexpected failure
  kExitInputError = 2,  // bad input or usage
  kExitInfeasible = 3,  // the constraints cannot be met
};

}  // namespace trainplan
