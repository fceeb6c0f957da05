// File I/O for the emulation driver programs that harness.h generates: every launcher
// argument k of a run lives in <dir>/<k>.bin (buffers, raw bytes) or <dir>/<k>.txt
// (scalars, as text).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace te_emu_io {

inline std::string path(const char* dir, int k, const char* ext) {
  return std::string(dir) + "/" + std::to_string(k) + ext;
}

inline std::vector<unsigned char> read_buffer(const char* dir, int k) {
  std::vector<unsigned char> bytes;
  std::FILE* f = std::fopen(path(dir, k, ".bin").c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "driver: cannot open %s\n", path(dir, k, ".bin").c_str());
    std::exit(3);
  }
  unsigned char chunk[4096];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) bytes.insert(bytes.end(), chunk, chunk + n);
  std::fclose(f);
  return bytes;
}

inline void write_buffer(const char* dir, int k, const std::vector<unsigned char>& bytes) {
  std::FILE* f = std::fopen(path(dir, k, ".bin").c_str(), "wb");
  if (!f || (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())) {
    std::fprintf(stderr, "driver: cannot write %s\n", path(dir, k, ".bin").c_str());
    std::exit(3);
  }
  std::fclose(f);
}

inline std::string read_text(const char* dir, int k) {
  std::FILE* f = std::fopen(path(dir, k, ".txt").c_str(), "r");
  if (!f) {
    std::fprintf(stderr, "driver: cannot open %s\n", path(dir, k, ".txt").c_str());
    std::exit(3);
  }
  char text[128] = {0};
  size_t n = std::fread(text, 1, sizeof text - 1, f);
  std::fclose(f);
  return std::string(text, n);
}
inline long long read_int(const char* dir, int k) { return std::strtoll(read_text(dir, k).c_str(), nullptr, 10); }
inline double read_float(const char* dir, int k) { return std::strtod(read_text(dir, k).c_str(), nullptr); }

}  // namespace te_emu_io
