#include "io/llm_row_check.h"

#include "core/error.h"
#include "io/csv.h"

namespace trainplan::io {

std::optional<double> plain_positive_number(const std::string& cell) {
  const auto x = parse_finite(cell);  // no hexadecimal, no infinity
  if (!x || !(*x > 0)) return std::nullopt;
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
