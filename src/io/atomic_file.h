// Whole files written atomically: a temporary file beside the target, fsynced, then moved into
// place, so an existing file is either kept as it was or replaced whole, and a killed or failed
// write leaves nothing behind but a temporary file that the next write to the same path removes.
#pragma once
#include <string>
#include <string_view>

namespace tn::io {

// Whether a write may replace a file that exists at the path when it completes.
enum class Replace { No, Yes };

// Writes `bytes` to `path` (creating missing parent directories). With Replace::No the file is
// linked into place only if nothing exists there at that moment (a file created meanwhile is
// never replaced; the new bytes are then kept beside it under a free name, given in the error).
// Replacing keeps the old file's permission bits, and writes through a symbolic link to its
// target, leaving the link. Temporary files ".<name>.tmp-<pid>-<n>" of processes that no longer
// run are removed first. Throws RunFileError("cannot write <kind> '<path>': ...").
void write_file_atomically(const std::string& path, const std::string& kind, std::string_view bytes, Replace replace);

// Async-signal-safe: removes the temporary file of a write in progress in this process, if
// any, so that a process ending at once (a second Ctrl-C) leaves no temporary file behind.
void remove_temporary_now();

}  // namespace tn::io
