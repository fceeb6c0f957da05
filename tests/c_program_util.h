// Helpers for the tests that compile a C program against what te exports and run it: a
// scratch folder removed afterwards, the folder libte_runtime was loaded from, and a
// shell command run with its output in a log.
#pragma once
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "te/runtime/c_runtime_api.h"

namespace te::c_program_test {

// A fresh folder under the temporary directory ("<prefix>_XXXXXX"), removed with what it
// holds when this goes out of scope.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "cannot make a folder " << pattern;
      return;
    }
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  // The folder ("" when it could not be made: the test has failed already).
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The folder libte_runtime was loaded from.
inline std::string runtime_dir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&te_parallel_for), &info) == 0 || info.dli_fname == nullptr) {
    ADD_FAILURE() << "cannot locate libte_runtime";
    return ".";
  }
  std::string path = info.dli_fname;
  return path.substr(0, path.find_last_of('/'));
}

inline std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// Runs a shell command, returning its exit status; its output goes to `log`.
inline int run(const std::string& command, const std::string& log) {
  int status = std::system((command + " > " + log + " 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A sanitized libte_runtime needs the sanitizer runtimes in the C program too.
#if defined(__SANITIZE_ADDRESS__)
inline const char* kSanitize = " -fsanitize=address,undefined";
#else
inline const char* kSanitize = "";
#endif

}  // namespace te::c_program_test
