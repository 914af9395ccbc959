#include "core/error.h"

namespace trainplan {

static std::string format_input_error(const std::string& file, long line, const std::string& field,
                                      const std::string& message) {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) out += ":" + std::to_string(line);
    out += ": ";
  } else if (line > 0) {
    out += "line " + std::to_string(line) + ": ";
  }
  // A field named like a command-line option is one; any other is a column
  // (or key) of the input.
  if (!field.empty()) out += (field.rfind("--", 0) == 0 ? "option '" : "column '") + field + "': ";
  out += message;
  return out;
}

InputError::InputError(std::string file, long line, std::string field, const std::string& message)
    : std::runtime_error(format_input_error(file, line, field, message)),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)),
      message_(message) {}

}  // namespace trainplan
