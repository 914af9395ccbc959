// The profiling-sample CSV format (documented in docs/FORMATS.md):
//
//   # trainplan: metric=max dataset_size=50000        (optional, a comment before the header)
//   batch,workers,epochs,epoch_time_s,metric[,nodes,model,hardware,grad_sqr,grad_var]
//
// `batch` is per worker; `metric` may be empty in a time-only file.
#pragma once
#include <string>

#include "core/sample.h"

namespace trainplan::io {

// Reads and validates a sample file. Throws InputError naming file, line and
// column for: a missing column, a non-number, NaN/Inf, a time, batch or
// worker count <= 0, an epoch time over 1e9 s, negative epochs, an empty file or one with no rows,
// duplicate header names, a format line given twice or after the header, and a configuration's nodes
// stated on some rows and empty on others.
SampleSet read_samples_csv(const std::string& path);
// Same, from text; `name` stands in for the path in messages.
SampleSet parse_samples_csv(const std::string& text, const std::string& name);

// Writes the format above, header line included. Throws on I/O failure.
void write_samples_csv(const std::string& path, const SampleSet& set);
std::string format_samples_csv(const SampleSet& set);

}  // namespace trainplan::io
