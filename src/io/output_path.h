// Whether a file a verb will write can be written, checked before the verb's
// work: a result computed for minutes is not lost to a folder that does not
// exist.
#pragma once
#include <string>

namespace trainplan::io {

// Throws InputError naming `option` (and the path) when `path` is a folder,
// its folder does not exist, or either cannot be written. "-" (standard
// output) and "" (no file) pass.
void check_output_path(const std::string& path, const std::string& option);

}  // namespace trainplan::io
