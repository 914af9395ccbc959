// Whether a file a verb will write can be written, checked before the verb's
// work: a result computed for minutes is not lost to a folder that does not
// exist.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace trainplan::io {

// Throws InputError naming `option` (and the path) when `path` is a folder,
// its folder does not exist, or either cannot be written (saying why: no
// permission, a read-only file system), or when it is an SQLite database (a
// sample store) or the -wal, -shm or -journal file SQLite keeps beside one.
// "-" (standard output) and "" (no file) pass.
void check_output_path(const std::string& path, const std::string& option);

// The same, and also refuses when `path` is one of the verb's `inputs` (each
// {path, the option that named it}; "" skipped) under any name, a link or
// another spelling: writing the output would replace what the verb reads.
// An input that is a folder covers every file already in it, at any depth,
// and a new file in a trace folder under it that the trace's reader would
// read the next time (a validation-7.csv beside a placements.csv). An input
// not there yet (a store's live log) is matched by its path.
void check_output_path(const std::string& path, const std::string& option,
                       const std::vector<std::pair<std::string, std::string>>& inputs);

}  // namespace trainplan::io
