// The on-disk compile cache: one file per entry, "<32 hex digits>.teobj", holding a
// magic line, the full key, the bytes and a checksum of both.
#include "codegen_llvm/disk_cache.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "te/log.h"

namespace te::codegen {
namespace fs = std::filesystem;
namespace {

constexpr const char* kMagic = "te-compile-cache 1\n";
constexpr const char* kSuffix = ".teobj";

uint64_t fnv1a(const std::string& text, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

std::string entry_path(const std::string& dir, const std::string& key) {
  // Two 64-bit hashes name the file; the key inside decides a hit.
  return fmt::format("{}/{:016x}{:016x}{}", dir, fnv1a(key), fnv1a(key, 0x9e3779b97f4a7c15ull), kSuffix);
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

bool get_u64(const std::string& in, size_t& at, uint64_t& v) {
  if (in.size() - at < 8) return false;
  v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(static_cast<unsigned char>(in[at + size_t(i)])) << (8 * i);
  at += 8;
  return true;
}

// The entry's bytes when the file is whole and holds key; nullopt otherwise.
std::optional<std::string> decode(const std::string& file, const std::string& key) {
  const size_t magic = std::strlen(kMagic);
  if (file.compare(0, magic, kMagic) != 0) return std::nullopt;
  size_t at = magic;
  uint64_t key_size = 0, size = 0, sum = 0;
  if (!get_u64(file, at, key_size) || key_size > file.size() - at) return std::nullopt;
  std::string stored_key = file.substr(at, key_size);
  at += key_size;
  if (!get_u64(file, at, size) || size > file.size() - at) return std::nullopt;
  std::string bytes = file.substr(at, size);
  at += size;
  if (!get_u64(file, at, sum) || at != file.size()) return std::nullopt;
  if (sum != fnv1a(bytes, fnv1a(stored_key)) || stored_key != key) return std::nullopt;
  return bytes;
}

// TE_CACHE_MAX_MB (a number of MiB, fractions allowed), 1024 when unset or not a number.
uint64_t max_bytes() {
  const char* text = env("TE_CACHE_MAX_MB");
  char* end = nullptr;
  double mb = text ? std::strtod(text, &end) : 1024;
  if (text && (*end != '\0' || !(mb >= 0) || mb > 1e12)) mb = 1024;
  return uint64_t(mb * double(1 << 20));
}

// Removes the least recently used entries (by modification time, which a hit renews)
// until the folder is under the cap.
void evict(const std::string& dir) {
  struct Entry {
    fs::file_time_type used;
    uint64_t size;
    fs::path path;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != kSuffix) continue;
    std::error_code e1, e2;
    uint64_t size = e.file_size(e1);
    fs::file_time_type used = e.last_write_time(e2);
    if (e1 || e2) continue;
    entries.push_back({used, size, e.path()});
    total += size;
  }
  const uint64_t cap = max_bytes();
  if (total <= cap) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= cap) break;
    if (fs::remove(e.path, ec)) total -= e.size;
  }
}

}  // namespace

uint64_t cache_digest(const std::string& key) { return fnv1a(key); }

std::string disk_cache_dir() {
  const char* off = env("TE_CACHE");
  if (off && std::string(off) == "0") return "";
  if (const char* dir = env("TE_CACHE_DIR")) return dir;
  if (const char* xdg = env("XDG_CACHE_HOME")) return std::string(xdg) + "/te";
  if (const char* home = env("HOME")) return std::string(home) + "/.cache/te";
  return "";
}

std::optional<std::string> disk_cache_get(const std::string& key) {
  const std::string dir = disk_cache_dir();
  if (dir.empty()) return std::nullopt;
  const std::string path = entry_path(dir, key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  std::optional<std::string> bytes = decode(text.str(), key);
  std::error_code ec;
  if (!bytes) {
    TE_LOG(Warn, fmt::format("compile cache: {} is damaged or not this key's; removed (it will be rebuilt)", path));
    fs::remove(path, ec);
    return std::nullopt;
  }
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // most recently used
  return bytes;
}

void disk_cache_put(const std::string& key, const std::string& bytes) {
  const std::string dir = disk_cache_dir();
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string data = kMagic;
  put_u64(data, key.size());
  data += key;
  put_u64(data, bytes.size());
  data += bytes;
  put_u64(data, fnv1a(bytes, fnv1a(key)));
  const std::string path = entry_path(dir, key);
  const std::string temp = fmt::format("{}.{}.{:x}.tmp", path, ::getpid(), std::random_device{}());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) {
      fs::remove(temp, ec);
      TE_LOG(Debug, fmt::format("compile cache: cannot write {}", temp));
      return;
    }
  }
  // rename() replaces atomically: readers see the old entry or the new one, never a part.
  fs::rename(temp, path, ec);
  if (ec) {
    fs::remove(temp, ec);
    return;
  }
  evict(dir);
}

std::string te_build_identity() {
  static const std::string identity = [] {
    std::string text = "te " TE_VERSION_STRING;
    Dl_info info{};
    std::error_code e1, e2;
    if (dladdr(reinterpret_cast<void*>(&te_build_identity), &info) != 0 && info.dli_fname != nullptr) {
      auto size = fs::file_size(info.dli_fname, e1);
      auto time = fs::last_write_time(info.dli_fname, e2);
      if (!e1 && !e2) text += fmt::format(" lib {} {}", size, time.time_since_epoch().count());
    }
    return text;
  }();
  return identity;
}

}  // namespace te::codegen
