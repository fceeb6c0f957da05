#include "codegen_cuda_src/extern_headers.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "expr/extern_calls.h"

namespace te::cuda {
namespace {

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// source with comments and string/character literals blanked out (newlines kept), so
// that a name in a comment or a string does not count as declared.
std::string code_only(const std::string& s) {
  std::string out = s;
  size_t i = 0;
  auto blank_to = [&](size_t end) {
    for (; i < end && i < out.size(); ++i)
      if (out[i] != '\n') out[i] = ' ';
  };
  while (i < s.size()) {
    if (s.compare(i, 2, "//") == 0) {
      size_t end = s.find('\n', i);
      blank_to(end == std::string::npos ? s.size() : end);
    } else if (s.compare(i, 2, "/*") == 0) {
      size_t end = s.find("*/", i + 2);
      blank_to(end == std::string::npos ? s.size() : end + 2);
    } else if (s[i] == '"' || s[i] == '\'') {
      char quote = s[i];
      size_t end = i + 1;
      while (end < s.size() && s[end] != quote && s[end] != '\n') end += s[end] == '\\' ? 2 : 1;
      blank_to(std::min(end + 1, s.size()));
    } else {
      ++i;
    }
  }
  return out;
}

std::string read_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(
        fmt::format("build_cuda: cannot read '{}' (CudaOptions::extern_headers): {}", path, std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string with_newline(std::string s) {
  if (!s.empty() && s.back() != '\n') s += '\n';
  return s;
}

// `#pragma once` in the .cu itself draws a warning ("in main file") that nvcc's
// -Werror turns into an error; inlined once, the header needs no guard.
std::string without_pragma_once(const std::string& s) {
  std::istringstream in(s);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string a, b, c, rest;
    words >> a;
    if (a == "#")
      words >> b >> c;
    else if (a == "#pragma")
      b = "pragma", words >> c;
    bool once = b == "pragma" && c == "once" && !(words >> rest);
    out += once ? "// (te: the header's pragma once is dropped: its text is copied in once)\n" : line + "\n";
  }
  return out;
}

}  // namespace

bool mentions_call(const std::string& source, const std::string& name) {
  const std::string code = code_only(source);
  for (size_t at = code.find(name); at != std::string::npos; at = code.find(name, at + 1)) {
    if (at > 0 && is_ident_char(code[at - 1])) continue;
    size_t next = at + name.size();
    while (next < code.size() && std::isspace(static_cast<unsigned char>(code[next]))) ++next;
    if (next < code.size() && code[next] == '(') return true;
  }
  return false;
}

std::string extern_header_text(const LoweredFunc& f, const CudaOptions& options) {
  std::string text, declared;  // what goes into the source; the same without the marks
  for (const std::string& path : options.extern_headers) {
    std::string header = without_pragma_once(with_newline(read_header(path)));
    declared += header;
    text += fmt::format("// ---- CudaOptions::extern_headers: {} ----\n{}// ---- end of {} ----\n", path, header, path);
  }
  if (!options.extern_code.empty()) {
    std::string code = with_newline(options.extern_code);
    declared += code;
    text += "// ---- CudaOptions::extern_code ----\n" + code + "// ---- end of CudaOptions::extern_code ----\n";
  }
  for (const ExternFunction& e : extern_functions({f}, "build_cuda")) {
    bool builtin = false;
    for (const std::string& name : options.extern_builtins) builtin = builtin || name == e.name;
    if (builtin) continue;
    if (declared.empty())
      throw Error(
          fmt::format("build_cuda: '{}' calls call_extern '{}' ({}), but no header is given: the GPU "
                      "needs it as a __device__ function; name the header that defines it in "
                      "CudaOptions::extern_headers (or give its code in CudaOptions::extern_code, or "
                      "list it in CudaOptions::extern_builtins if CUDA itself declares it)",
                      e.caller, e.name, e.sig.to_string()));
    if (!mentions_call(declared, e.name)) {
      std::vector<std::string> sources;
      for (const std::string& path : options.extern_headers) sources.push_back("'" + path + "'");
      if (!options.extern_code.empty()) sources.push_back("CudaOptions::extern_code");
      throw Error(
          fmt::format("build_cuda: call_extern '{}' (called by '{}' as {}) is not declared in {}: te "
                      "looks for '{}(' outside comments; define it there as a __device__ function (or "
                      "list it in CudaOptions::extern_builtins if CUDA itself declares it)",
                      e.name, e.caller, e.sig.to_string(), fmt::join(sources, ", "), e.name));
    }
  }
  return text;
}

}  // namespace te::cuda
