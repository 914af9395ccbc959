// Writing a result file whole or not at all.
#pragma once
#include <string>

namespace trainplan {

// Writes `content` to `path` through a temporary file of its own beside it
// (PATH.N.tmp, created exclusively), closed and checked before it is renamed over PATH: a full
// disk shows only when the last buffer is flushed, and a crash or a failed
// write must leave the old file as it was. A symbolic link is written
// through, to the file it names (created if it does not exist yet); the file keeps its mode (a new one: the
// umask's). A device or a FIFO (/dev/null, a named pipe) is written into as
// it is, since renaming over it would replace it with a plain file;
// /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are written to
// through this process's descriptor (after flushing stdio), wherever the
// shell pointed it; a folder is refused. The temporary file is synced before
// the rename. On failure the temporary file is removed and the error names
// `path`: InputError where it cannot be created or moved into place,
// ExternalError (exit 1) where the disk did not take the bytes.
// Termination signals are held from the temporary file's creation to its
// rename or removal (core/signals_held.h): a Ctrl-C then leaves no PATH.N.tmp.
void write_whole_file(const std::string& path, const std::string& content);

}  // namespace trainplan
