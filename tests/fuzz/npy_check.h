// The property the .npy reader must have on any file, shared by the libFuzzer target
// (npy_libfuzzer.cpp) and the bounded run in the test suite (tests/test_fuzz_npy.cpp):
// NDArray::load_npy either returns an array whose data the file holds (so no shape can
// make it allocate more than the file's size) that saves back to a file it reads the
// same, or throws te::Error. Anything else (another exception, an internal error, a
// crash, a sanitizer report: an over-read, a leak) is a failure.
#pragma once
#include <te/error.h>
#include <te/ndarray.h>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace te::fuzz {

// A file name of this process for the bytes under test (the reader takes paths).
// In memory (/dev/shm) where there is one: thousands of small files.
inline std::string npy_scratch_path(const std::string& tag) {
  const char* env = std::getenv("TMPDIR");
  std::string dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : env && *env ? env : "/tmp";
  return dir + "/te_fuzz_npy_" + std::to_string(::getpid()) + "_" + tag + ".npy";
}

// "" when the property holds for these bytes, else what broke.
inline std::string check_npy_bytes(const uint8_t* data, size_t size, const std::string& path) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) return "cannot write the scratch file " + path;
  }
  NDArray a;
  try {
    a = NDArray::load_npy(path);
  } catch (const te::InternalError& e) {
    return std::string("internal error: ") + e.what();
  } catch (const te::Error& e) {
    if (std::strstr(e.what(), "load_npy") == nullptr)
      return std::string("an error that does not say load_npy: ") + e.what();
    return "";
  } catch (const std::exception& e) {
    return std::string("an exception that is not te::Error: ") + e.what();
  }
  if (!a.defined()) return "load_npy returned an undefined array";
  if (a.nbytes() > size) return "an array larger than the file (" + std::to_string(a.nbytes()) + " bytes)";
  // What it read saves and reads back the same.
  std::string again = path + ".again";
  try {
    a.save_npy(again);
    NDArray b = NDArray::load_npy(again);
    std::remove(again.c_str());
    if (b.shape() != a.shape() || b.dtype() != a.dtype() || std::memcmp(a.data(), b.data(), a.nbytes()) != 0)
      return "the array changes through save_npy / load_npy";
  } catch (const std::exception& e) {
    std::remove(again.c_str());
    return std::string("an array it read does not round-trip: ") + e.what();
  }
  return "";
}

}  // namespace te::fuzz
