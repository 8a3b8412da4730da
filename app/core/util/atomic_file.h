// Saving a file without ever leaving half of it where a good one was: the content goes to a
// temporary file in the same folder, is flushed to the disk, and only then renamed over the
// target (rename within a file system replaces a file in one step). A crash, a kill or a full
// disk leaves the old file as it was. The window's own saves use QSaveFile, which does the same.
#pragma once

#include <filesystem>
#include <string>

namespace convscope {

// Writes `content` to `path` as described above. Throws convscope::Error naming the file and the
// system's reason (a missing or read-only folder, a full disk); the temporary file is removed
// and whatever was at `path` is left untouched.
// `mode`: the new file's permissions before the umask (0600: its owner's alone, from the first
// byte on, for secrets).
void writeFileAtomically(const std::filesystem::path& path, const std::string& content, unsigned mode = 0666);

}  // namespace convscope
