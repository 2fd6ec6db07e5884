// Whole files written atomically: a temporary file beside the target, fsynced, then moved into
// place, so an existing file is either kept as it was or replaced whole, and a killed or failed
// write leaves nothing behind but a temporary file that the next write to the same path removes.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace tn::io {

// Whether a write may replace a file that exists at the path when it completes.
enum class Replace { No, Yes };

// Writes `bytes` to `path` (creating missing parent directories). With Replace::No the file is
// linked into place only if nothing exists there at that moment (a file created meanwhile is
// never replaced; the new bytes are then kept beside it under a free name, given in the error).
// Replacing keeps the old file's permission bits, and writes through symbolic links to the end
// of their chain, leaving the links. The temporary file ".<name>.tmp-<pid>-<n>" is created new
// (O_EXCL | O_NOFOLLOW: a file or symbolic link planted at that name is never opened or
// followed; the next n is taken instead) and locked while it is written; temporary files whose
// process no longer runs and that nobody locks (a writer on another machine of a shared file
// system does) are removed first. Every name fits the directory's limit (255 bytes): the name
// part of a long one is cut (see fitted_name). Throws RunFileError("cannot write <kind>
// '<path>': ..."), e.g. "'<path>' is a loop of symbolic links".
void write_file_atomically(const std::string& path, const std::string& kind, std::string_view bytes, Replace replace);

// Why a write to `path` would fail, checked before the work that makes its bytes: "" when it
// would not, else a sentence: "'l1' is a loop of symbolic links; ...", a file name longer than
// the file system allows, or "cannot write to directory 'd': Permission denied" (tried with a
// temporary file created and removed as write_file_atomically does; skipped when the directory
// does not exist yet, as the write creates it).
std::string output_problem(const std::string& path);

// The file a write to `path` creates or replaces: the end of its chain of symbolic links, or
// `path` itself. Throws RunFileError("'<path>' is a loop of symbolic links; ...").
std::string write_target(const std::string& path);

// `name` (a file name, no directory) if it has at most `room` bytes, else its first bytes (cut
// at a UTF-8 character boundary) followed by "~" and 8 hex digits of a CRC-32 of the whole name,
// `room` bytes in all, so that two long names still give different names.
std::string fitted_name(const std::string& name, std::size_t room);

// `base` + `suffix`, its file name cut with fitted_name to fit the 255 bytes a file name may
// have: a path derived from an output path by adding to it (NAME.ckpt.h5 from NAME.h5).
std::string with_suffix(const std::string& base, const std::string& suffix);

// ".<name><tail>" beside `target`, its name fitted so that a tail of up to `room` bytes fits the
// directory's limit on file names (for the lock file of io/file_lock.h: room 5, tail ".lock").
std::string hidden_beside(const std::string& target, const std::string& tail, std::size_t room);

// Async-signal-safe: removes the temporary file of a write in progress in this process, if
// any, so that a process ending at once (a second Ctrl-C) leaves no temporary file behind.
void remove_temporary_now();

}  // namespace tn::io
