#include "io/llm_row_check.h"

#include "core/error.h"

namespace trainplan::io {

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
