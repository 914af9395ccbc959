#include "io/llm_row_check.h"

#include <cstdlib>

#include "core/error.h"

namespace trainplan::io {

std::optional<double> plain_positive_number(const std::string& cell) {
  if (cell.empty()) return std::nullopt;
  char* end = nullptr;
  const double x = std::strtod(cell.c_str(), &end);
  if (end != cell.c_str() + cell.size() || !(x > 0)) return std::nullopt;
  return x;
}

void check_shape_and_layout(const CsvTable& t, const CsvRow& row, const structure::TransformerSpec& spec,
                            const structure::ParallelLayout& layout) {
  try {
    structure::validate(spec);
  } catch (const InputError& e) {
    t.fail(row, e.field(), e.message());
  }
  if (auto p = structure::check_layout(spec, layout)) t.fail(row, p->field, p->message);
}

}  // namespace trainplan::io
