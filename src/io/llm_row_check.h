// The check every reader of transformer runs makes of a row: the shape is a
// transformer (structure::validate) and the parallel layout divides it
// (structure::check_layout). A failure throws InputError naming the file,
// the row's line and the column at fault.
#pragma once
#include <optional>
#include <string>

#include "io/csv.h"
#include "structure/parallel_layout.h"
#include "structure/transformer.h"

namespace trainplan::io {

// A cell that is a plain positive number; nullopt for "" and for what the
// published tables write instead of one ("~32", "n/a").
std::optional<double> plain_positive_number(const std::string& cell);

void check_shape_and_layout(const CsvTable& t, const CsvRow& row, const structure::TransformerSpec& spec,
                            const structure::ParallelLayout& layout);

}  // namespace trainplan::io
