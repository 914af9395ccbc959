// Errors that trainplan reports to users. Every error caused by input names
// where the input was wrong, so that the user can fix it without guessing.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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
// Where the planner can say it in figures, shortfall() has the constraint
// that fails, its limit, the value of the configuration closest to meeting
// it, and that configuration, so that a script reads what to relax without
// parsing what().
class InfeasibleError : public std::runtime_error {
 public:
  struct Shortfall {
    std::string constraint;  // "deadline", "target", ...: the first word of what() names it too
    double limit = 0;        // the constraint's value (the deadline, the target)
    double closest = 0;      // the closest configuration's value of the same quantity
    std::string unit;        // "s", "metric", ...
    std::vector<std::pair<std::string, double>> configuration;  // named figures: batch, workers, ...
  };
  using std::runtime_error::runtime_error;
  InfeasibleError(const std::string& what, std::optional<Shortfall> shortfall)
      : std::runtime_error(what), shortfall_(std::move(shortfall)) {}
  const std::optional<Shortfall>& shortfall() const { return shortfall_; }

 private:
  std::optional<Shortfall> shortfall_;
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
