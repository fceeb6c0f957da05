// Ahead of time: object files, shared libraries (linked by the system C compiler) and
// the C headers that declare their functions.
#include <dlfcn.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen_llvm/compiler.h"
#include "te/build.h"
#include "te/runtime/c_runtime_api.h"

extern char** environ;

namespace te {

void codegen::write_file(const std::string& path, const std::string& bytes, const char* what) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(fmt::format("{}: cannot open '{}' for writing: {}", what, path, std::strerror(errno)));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw Error(fmt::format("{}: cannot write '{}'", what, path));
}

namespace {
using codegen::write_file;

// Runs argv[0] (found on PATH) and waits; te::Error unless it exits with 0.
void run_program(const std::vector<std::string>& argv, const char* what) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ);
  std::string command = fmt::format("{}", fmt::join(argv, " "));
  if (rc != 0) throw Error(fmt::format("{}: cannot run '{}': {}", what, command, std::strerror(rc)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw Error(fmt::format("{}: lost '{}': {}", what, command, std::strerror(errno)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(fmt::format("{}: '{}' failed (status {})", what, command, status));
}

// $CC split on spaces ("ccache gcc"), or cc; for a foreign triple, <triple>-gcc (as
// Debian's cross compilers are named) unless $CC is set.
std::vector<std::string> c_compiler(const BuildOptions& options) {
  std::vector<std::string> words;
  const char* cc = std::getenv("CC");
  std::string fallback = codegen::foreign_target(options) ? options.target.triple + "-gcc" : std::string("cc");
  std::istringstream in(cc != nullptr && *cc != '\0' ? cc : fallback);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The linker arguments of BuildOptions::extern_libraries: a path is linked as it is, with
// its folder in the rpath (made absolute: the library is found wherever the program
// runs from); a bare file name is searched as the dynamic loader will (-l:name).
std::vector<std::string> extern_library_arguments(const BuildOptions& options) {
  std::vector<std::string> args;
  for (const std::string& lib : options.extern_libraries) {
    if (lib.empty()) throw Error("export_library: BuildOptions::extern_libraries has an empty entry");
    if (lib.find('/') == std::string::npos) {
      args.push_back("-l:" + lib);
      continue;
    }
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(lib, ec);
    if (ec) absolute = lib;
    args.push_back(absolute.string());
    args.push_back("-Wl,-rpath," + absolute.parent_path().string());
  }
  return args;
}

// The linker arguments that make a kernel library name libte_runtime (DT_NEEDED), so a
// plain dlopen of it works: the runtime this process loaded (the installed one, or the
// build tree's), found through the RUNPATH "$ORIGIN:<its folder>" (a copy shipped next
// to the kernel library first). None for another target: this runtime is the host's.
std::vector<std::string> runtime_library_arguments(const BuildOptions& options) {
  if (codegen::foreign_target(options)) return {};
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&te_parallel_for), &info) == 0 || info.dli_fname == nullptr)
    throw Error("export_library: cannot find the file of libte_runtime (dladdr failed)");
  std::error_code ec;
  std::filesystem::path runtime = std::filesystem::canonical(info.dli_fname, ec);
  if (ec) runtime = info.dli_fname;
  return {runtime.string(), "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN:" + runtime.parent_path().string()};
}

std::string header_guard(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  std::string guard = "TE_GENERATED_";
  for (char c : name)
    guard += std::isalnum(static_cast<unsigned char>(c))
                 ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
                 : '_';
  return guard + "_";
}

std::string describe(const codegen::KernelSignature& sig) {
  std::string text;
  for (const codegen::KernelArg& a : sig.args) {
    if (a.buffer.defined()) {
      std::vector<std::string> dims;
      for (const Expr& e : a.buffer.shape()) dims.push_back(to_string(e));
      DataType bt = a.buffer.dtype();
      std::string storage = bt.is_float16()  ? " (IEEE half bits)"
                            : bt.is_bfloat() ? " (bfloat16 bits: a float32's upper half)"
                            : bt.is_bool()   ? " (one byte each, 0 or 1)"
                                             : "";
      text += fmt::format(" *   {}: {}[{}]{}, row-major\n", a.c_name, a.buffer.dtype().to_string(),
                          fmt::join(dims, ", "), storage);
    } else {
      DataType t = a.var.dtype();
      std::string note = a.param < 0                      ? " (a shape variable)"
                         : t.is_float() && t.bits() == 16 ? " (passed as float, rounded to " + t.to_string() + ")"
                         : t.is_bool()                    ? " (0 or 1)"
                                                          : "";
      text += fmt::format(" *   {}: {}{}\n", a.c_name, t.to_string(), note);
    }
  }
  return text;
}

}  // namespace

std::string c_prototype(const LoweredFunc& func) { return codegen::c_prototype(codegen::kernel_signature(func)); }

std::string c_header(const std::vector<LoweredFunc>& funcs, const std::string& guard) {
  codegen::CompileInput in = codegen::compile_input(funcs, BuildOptions());
  std::string text = fmt::format(
      "/* Generated by te. Link with the object or library built by te::export_object /\n"
      " * te::export_library and with libte_runtime (parallel loops, errors, memory).\n"
      " * Buffers are raw pointers to row-major arrays; an array a function writes must not\n"
      " * overlap any other argument. Each function returns 0 on success, or nonzero with\n"
      " * the reason in te_get_last_error(). */\n"
      "#ifndef {0}\n#define {0}\n\n#include <stdint.h>\n\n"
      "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n"
      "/* The message of the last failure on the calling thread (libte_runtime). */\n"
      "const char* te_get_last_error(void);\n",
      guard);
  for (size_t k = 0; k < in.funcs.size(); ++k) {
    text +=
        fmt::format("\n/* {}\n{} */\n{};\n", in.funcs[k].name, describe(in.sigs[k]), codegen::c_prototype(in.sigs[k]));
  }
  text += "\n#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n#endif\n";
  return text;
}

void export_header(const LoweredFunc& func, const std::string& path) {
  export_header(std::vector<LoweredFunc>{func}, path);
}

void export_header(const std::vector<LoweredFunc>& funcs, const std::string& path) {
  write_file(path, c_header(funcs, header_guard(path)), "export_header");
}

void export_object(const LoweredFunc& func, const std::string& path, const BuildOptions& options) {
  export_object(std::vector<LoweredFunc>{func}, path, options);
}

void export_object(const std::vector<LoweredFunc>& funcs, const std::string& path, const BuildOptions& options) {
  std::string object = codegen::compile_object(codegen::compile_input(funcs, options));
  write_file(path, object, "export_object");
}

void export_library(const LoweredFunc& func, const std::string& path, const BuildOptions& options) {
  export_library(std::vector<LoweredFunc>{func}, path, options);
}

void link_library(const std::string& object_path, const std::string& path, const BuildOptions& options) {
  std::vector<std::string> argv = c_compiler(options);
  for (const char* a : {"-shared", "-o"}) argv.push_back(a);
  argv.push_back(path);
  argv.push_back(object_path);
  for (const std::string& a : extern_library_arguments(options)) argv.push_back(a);
  for (const std::string& a : runtime_library_arguments(options)) argv.push_back(a);
  run_program(argv, "export_library");
}

void export_library(const std::vector<LoweredFunc>& funcs, const std::string& path, const BuildOptions& options) {
  std::string object = codegen::compile_object(codegen::compile_input(funcs, options));
  std::string temp = path + ".XXXXXX.o";
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  int fd = mkstemps(name.data(), 2);
  if (fd < 0)
    throw Error(
        fmt::format("export_library: cannot create a temporary file next to '{}': {}", path, std::strerror(errno)));
  close(fd);
  std::string object_path(name.data());
  try {
    write_file(object_path, object, "export_library");
    link_library(object_path, path, options);
  } catch (...) {
    std::remove(object_path.c_str());
    throw;
  }
  std::remove(object_path.c_str());
}

}  // namespace te
