// Whether a file is an SQLite database, by the header every one starts with.
#pragma once
#include <string>

namespace trainplan::io {

// True when `path` is a regular file that starts with SQLite's 16-byte
// header ("SQLite format 3\0"); false for anything else, a missing file
// included.
bool is_sqlite_database(const std::string& path);

}  // namespace trainplan::io
