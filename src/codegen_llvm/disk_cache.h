// The persistent compile cache (as ccache's and Triton's): compiled objects on disk,
// keyed by everything that decides the bytes, so a new process skips LLVM.
//   TE_CACHE_DIR: the folder (default $XDG_CACHE_HOME/te, else ~/.cache/te)
//   TE_CACHE=0: off;  TE_CACHE_MAX_MB: the size cap (default 1024), oldest used evicted
// Entries are written atomically (a temporary file renamed); an entry that does not read
// back whole and matching its key (a torn or foreign file) is removed, never loaded.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace te::codegen {

// The folder in use; "" when the cache is off (TE_CACHE=0, or no folder to use).
std::string disk_cache_dir();
// The bytes stored under key, or nullopt; a hit marks the entry as just used.
std::optional<std::string> disk_cache_get(const std::string& key);
// Stores bytes under key (best effort: a cache that cannot be written is skipped).
void disk_cache_put(const std::string& key, const std::string& bytes);
// What the cache key adds to the IR and options: te's version and this libte's build
// (its size and time), so a rebuilt te never loads an older te's code.
std::string te_build_identity();
// A 64-bit digest of key (for names derived from it).
uint64_t cache_digest(const std::string& key);

}  // namespace te::codegen
