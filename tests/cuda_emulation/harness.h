// Test helpers for the CUDA backend: running the host compiler and nvcc on generated
// source, and the emulation program that runs generated .cu files on the CPU.
#pragma once
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "te/te.h"

namespace te::cuda_test {

inline std::string emulation_include_dir() { return std::string(TE_TEST_DATA_DIR) + "/../cuda_emulation"; }

inline std::string host_cxx() {
  if (const char* env = std::getenv("TE_HOST_CXX")) return env;
#ifdef TE_HOST_CXX
  return TE_HOST_CXX;
#else
  return "c++";
#endif
}

// nvcc from $TE_NVCC (when set, and only there: TE_NVCC= disables the nvcc checks),
// CMake's CUDA toolkit or /usr/local/cuda; empty if none runs.
inline std::string nvcc_path() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("TE_NVCC")) return ::access(env, X_OK) == 0 ? env : "";
#ifdef TE_NVCC
  candidates.push_back(TE_NVCC);
#endif
  candidates.push_back("/usr/local/cuda/bin/nvcc");
  for (const std::string& c : candidates)
    if (!c.empty() && ::access(c.c_str(), X_OK) == 0) return c;
  return "";
}

struct CommandResult {
  int status = -1;  // the exit status, or -1 if the command did not exit normally
  std::string output;
};

// Runs a shell command, capturing stdout and stderr together.
inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  std::FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
  int status = ::pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A fresh directory under the system's temporary folder, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "te_cuda_XXXXXX").string();
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
    path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// nvcc on one .cu file: -std=c++17, every nvcc warning an error; `mode` is "-cubin"
// (device code only) or "-c" (device and host code, host warnings as errors too).
inline CommandResult nvcc_compile(const std::string& nvcc, const std::string& cu_path, const std::string& arch,
                                  const std::string& mode, const std::string& out_path) {
  std::string cmd =
      fmt::format("{} -std=c++17 -arch={} {} -Werror all-warnings {} {} -o {}", quote(nvcc), arch, mode,
                  mode == "-c" ? "-Xcompiler -Wall,-Wextra,-Werror" : "", quote(cu_path), quote(out_path));
  return run_command(cmd);
}

// The emulated result of one launcher call.
struct EmulatedRun {
  int error = -1;                                 // the cudaError_t the launcher returned
  std::vector<NDArray> arrays;                    // after the call, one per parameter of f (undefined for scalars)
  std::vector<std::array<unsigned, 6>> launches;  // grid x y z, block x y z of each launch
  long live_allocations = 0;                      // cudaMallocAsync without cudaFreeAsync
  std::string output;                             // what the program printed
};

// All the modules of a test suite compiled into one program (one host-compiler run),
// each in its own namespace, with a driver that calls a module's launcher on files.
class EmulatedProgram {
 public:
  // Which paths of the helpers' `#if TE_PTX(arch)` a program runs: the GPU's PTX
  // instructions through ptx_emulation.h, the portable code without.
  enum class Paths {
    Both,      // each, where a module has PTX (else the portable one): run() compares them bit for bit
    Ptx,       // the PTX path only (where a module has none: the portable one)
    Portable,  // the portable path only
  };
  explicit EmulatedProgram(Paths paths = Paths::Both) : paths_(paths) {}

  // Adds a module; its launcher name must be unique in the program.
  void add(const CudaModule& m) { modules_.push_back(m); }

  // Compiles the program (twice with Paths::Both where a module has a PTX path); false
  // with the compiler's output in *log on failure.
  bool build(std::string* log) {
    bool has_ptx = false;
    for (const CudaModule& m : modules_) has_ptx = has_ptx || m.source().find("#if TE_PTX(") != std::string::npos;
    const bool portable = paths_ != Paths::Ptx || !has_ptx, ptx = paths_ != Paths::Portable && has_ptx;
    built_ = false;
    exe_.clear();
    ptx_exe_.clear();
    if (portable && !compile(false, log, &exe_)) return false;
    if (ptx && !compile(true, log, portable ? &ptx_exe_ : &exe_)) return false;
    return built_ = true;
  }

 private:
  // The driver program of the modules, with ptx_emulation.h or without, compiled (or found
  // in the cache) into *exe.
  bool compile(bool ptx, std::string* log, std::string* exe) {
    // cuda_bf16.h first, outside the modules' namespaces (the .cu files include it again).
    std::string src =
        std::string(ptx ? "#include \"ptx_emulation.h\"\n" : "") +
        "#include \"cuda_emulation.h\"\n#include \"cuda.h\"\n#include \"cuda_bf16.h\"\n#include \"driver_support.h\"\n"
        "#include <string>\n";
    for (size_t k = 0; k < modules_.size(); ++k) {
      const CudaModule& m = modules_[k];
      src += fmt::format("\nnamespace te_case_{} {{\n#line 1 \"{}.cu\"\n{}}}\n", k, m.name(), m.source());
      src += fmt::format("static int run_{}(const char* dir) {{\n", k);
      const auto& params = m.launcher_params();
      std::string call;
      for (size_t i = 0; i < params.size(); ++i) {
        const CudaParam& p = params[i];
        if (p.is_buffer()) {
          src += fmt::format("  std::vector<unsigned char> b{} = te_emu_io::read_buffer(dir, {});\n", i, i);
          call += fmt::format("({})b{}.data(), ", p.c_type, i);
        } else {
          bool is_float = p.var.dtype().is_float();
          call += fmt::format("({})te_emu_io::read_{}(dir, {}), ", p.c_type, is_float ? "float" : "int", i);
        }
      }
      src += fmt::format("  int err = (int)te_case_{}::{}({}nullptr);\n", k, m.name(), call);
      for (size_t i = 0; i < params.size(); ++i)
        if (params[i].is_buffer()) src += fmt::format("  te_emu_io::write_buffer(dir, {}, b{});\n", i, i);
      src += "  return err;\n}\n";
    }
    src +=
        "\nint main(int argc, char** argv) {\n  if (argc != 3) return 2;\n  std::string name = argv[1];\n  int err;\n";
    for (size_t k = 0; k < modules_.size(); ++k)
      src += fmt::format("  {}if (name == \"{}\") err = run_{}(argv[2]);\n", k ? "else " : "", modules_[k].name(), k);
    src += "  else return 2;\n";
    src += "  std::printf(\"error %d\\nlive_allocations %ld\\n\", err, te_emu::live_allocations);\n";
    src += "  for (const te_emu::Launch& l : te_emu::launches)\n";
    src +=
        "    std::printf(\"launch %u %u %u %u %u %u\\n\", l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, "
        "l.block.z);\n";
    src += "  return 0;\n}\n";
    // ctest runs each test in its own process: the program is cached by the hash of its
    // source and compile command, so one suite compiles it once.
    // $TE_EMULATION_CXXFLAGS adds flags, e.g. "-fsanitize=undefined" to check the
    // generated code for undefined behaviour on the test inputs.
    // -Wno-error=maybe-uninitialized: gcc can warn about a local array written and read
    // under two equivalent guards, which says nothing about what the code computes.
    // -frounding-math: GCC 12 folds `0.0f - (float)i` into `-(float)i` even at -O0,
    // giving -0.0 for i == 0 where IEEE (and nvcc) give +0.0.
    // -fstack-reuse=none: a wgmma with A from registers checks them when it completes,
    // which may come after the scope of the array holding them (registers outlive C++
    // scopes on the GPU); no other variable may take its place meanwhile.
    const char* extra = std::getenv("TE_EMULATION_CXXFLAGS");
    std::string flags = fmt::format(
        "-std=c++17 -O1 -pthread -Wall -Wextra -Werror -Wno-unknown-pragmas -Wno-unknown-warning-option "
        "-Wno-error=maybe-uninitialized -frounding-math -fstack-reuse=none -I {} {}",
        quote(emulation_include_dir()), extra ? extra : "");
    std::string headers;
    for (const char* h : {"cuda_emulation.h", "driver_support.h", "cuda_bf16.h", "ptx_emulation.h",
                          "hopper_emulation.h", "tensor_map.h", "cuda.h"})
      headers += read_file(emulation_include_dir() + "/" + h);
    std::string key = fmt::format("{:016x}", std::hash<std::string>()(host_cxx() + flags + headers + src));
    std::filesystem::path cache = cache_dir();
    *exe = (cache / ("driver_" + key)).string();
    if (::access(exe->c_str(), X_OK) == 0) return true;
    const std::string stem = ptx ? "/driver_ptx" : "/driver";
    std::string cpp = dir_.path() + stem + ".cpp", tmp_exe = dir_.path() + stem;
    write_file(cpp, src);
    CommandResult r = run_command(fmt::format("{} {} {} -o {}", quote(host_cxx()), flags, quote(cpp), quote(tmp_exe)));
    if (log) *log = r.output;
    if (r.status != 0) return false;
    // Publish atomically: a concurrent test process may be building the same program.
    std::error_code ec;
    std::filesystem::create_directories(cache, ec);
    std::string staged = *exe + "." + std::to_string(::getpid());
    std::filesystem::copy_file(tmp_exe, staged, std::filesystem::copy_options::overwrite_existing, ec);
    if (!ec) std::filesystem::rename(staged, *exe, ec);
    if (ec) *exe = tmp_exe;  // no cache: use the private copy
    return true;
  }

 public:
  // Calls the launcher of module `name` (built from f) with args in f's parameter order;
  // shape variables are taken from the arrays.
  // With Paths::Both and a module that has a PTX path, the two paths run on the same
  // arguments; a difference in any array is the result's error -3, described in output.
  EmulatedRun run(const std::string& name, const LoweredFunc& f, const std::vector<Argument>& args) {
    if (!built_) throw std::runtime_error("EmulatedProgram::run before a successful build()");
    EmulatedRun portable = run_with(exe_, name, f, args);
    if (ptx_exe_.empty() || portable.error != 0) return portable;
    EmulatedRun ptx = run_with(ptx_exe_, name, f, args);
    std::string differences;
    if (ptx.error != 0) differences = "the PTX path failed (error " + std::to_string(ptx.error) + "): " + ptx.output;
    for (size_t i = 0; differences.empty() && i < ptx.arrays.size() && i < portable.arrays.size(); ++i)
      if (portable.arrays[i].defined() &&
          (portable.arrays[i].nbytes() != ptx.arrays[i].nbytes() ||
           std::memcmp(portable.arrays[i].data(), ptx.arrays[i].data(), portable.arrays[i].nbytes()) != 0))
        differences = "the PTX path's array " + std::to_string(i) + " (" + f.params[i].name() +
                      ") differs from the portable path's";
    if (!differences.empty()) {
      portable.error = -3;
      portable.output += "\n" + differences + "\n";
    }
    return portable;
  }

 private:
  EmulatedRun run_with(const std::string& exe, const std::string& name, const LoweredFunc& f,
                       const std::vector<Argument>& args) {
    const CudaModule* m = nullptr;
    for (const CudaModule& x : modules_)
      if (x.name() == name) m = &x;
    if (!m) throw std::runtime_error("no module " + name);
    std::string dir = dir_.path() + "/run" + std::to_string(runs_++);
    std::filesystem::create_directory(dir);
    std::vector<NDArray> arrays(f.params.size());
    const auto& params = m->launcher_params();
    std::vector<std::pair<size_t, size_t>> buffer_files;  // launcher index, f.params index
    for (size_t i = 0; i < params.size(); ++i) {
      const CudaParam& p = params[i];
      if (p.is_buffer()) {
        size_t j = param_index(f, p);
        arrays[j] = args.at(j).array().copy();
        const NDArray& a = arrays[j];
        write_file(fmt::format("{}/{}.bin", dir, i),
                   std::string(static_cast<const char*>(a.data()), static_cast<const char*>(a.data()) + a.nbytes()));
        buffer_files.emplace_back(i, j);
      } else {
        write_file(fmt::format("{}/{}.txt", dir, i), scalar_text(f, args, p));
      }
    }
    CommandResult r = run_command(fmt::format("{} {} {}", quote(exe), quote(name), quote(dir)));
    EmulatedRun out;
    out.output = r.output;
    if (r.status != 0) return out;
    for (const auto& [i, j] : buffer_files) {
      std::string bytes = read_file(fmt::format("{}/{}.bin", dir, i));
      if (bytes.size() == arrays[j].nbytes() && !bytes.empty())
        std::memcpy(arrays[j].data(), bytes.data(), bytes.size());
    }
    out.arrays = std::move(arrays);
    std::istringstream lines(r.output);
    for (std::string word; lines >> word;) {
      if (word == "error") lines >> out.error;
      if (word == "live_allocations") lines >> out.live_allocations;
      if (word == "launch") {
        std::array<unsigned, 6> l{};
        for (unsigned& v : l) lines >> v;
        out.launches.push_back(l);
      }
    }
    return out;
  }

  // Next to the test executable (in the build tree), else in the temporary folder.
  static std::filesystem::path cache_dir() {
    std::error_code ec;
    std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) return self.parent_path() / "cuda_emulation_cache";
    return std::filesystem::temp_directory_path() / "te_cuda_emulation_cache";
  }

  static size_t param_index(const LoweredFunc& f, const CudaParam& p) {
    for (size_t j = 0; j < f.params.size(); ++j) {
      const Param& q = f.params[j];
      if (p.is_buffer() ? (q.is_buffer() && q.buffer.same_as(p.buffer)) : (!q.is_buffer() && q.var.same_as(p.var)))
        return j;
    }
    return f.params.size();
  }

  static std::string scalar_text(const LoweredFunc& f, const std::vector<Argument>& args, const CudaParam& p) {
    size_t j = param_index(f, p);
    if (j < f.params.size()) {
      const Argument& a = args.at(j);
      return a.kind() == Argument::Kind::Float ? fmt::format("{:.17g}", a.float_value())
                                               : std::to_string(a.int_value());
    }
    for (size_t k = 0; k < f.params.size(); ++k) {
      if (!f.params[k].is_buffer()) continue;
      const auto& shape = f.params[k].buffer.shape();
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d].same_as(p.var)) return std::to_string(args.at(k).array().shape()[d]);
    }
    throw std::runtime_error("no value for launcher argument " + p.name);
  }

  Paths paths_;
  TempDir dir_;
  std::vector<CudaModule> modules_;
  std::string exe_;      // the portable path's program (the PTX path's with Paths::Ptx)
  std::string ptx_exe_;  // the PTX path's, with Paths::Both where a module has one
  bool built_ = false;
  int runs_ = 0;
};

// A test suite's lowered functions in one emulated program, by name: SetUpTestSuite adds
// them (a failure to lower or build is kept for ready() to report), then builds once.
class EmulatedSuite {
 public:
  explicit EmulatedSuite(EmulatedProgram::Paths paths = EmulatedProgram::Paths::Both) : program_(paths) {}

  // Adds the function that `make` lowers, unless an earlier one failed.
  void add(const std::function<LoweredFunc()>& make) {
    if (!log_.empty()) return;
    try {
      LoweredFunc f = make();
      program_.add(build_cuda(f));
      funcs_.emplace_back(f.name, f);
    } catch (const Error& e) {
      log_ = std::string("lower/build_cuda failed: ") + e.what();
    }
  }
  void build() {
    if (log_.empty()) built_ = program_.build(&log_);
  }
  // Whether every function lowered and the program built; log() says why not.
  bool ready() const { return built_; }
  const std::string& log() const { return log_; }

  const LoweredFunc& func(const std::string& name) const {
    for (const auto& [n, f] : funcs_)
      if (n == name) return f;
    throw std::runtime_error("no function " + name);
  }
  // Runs function `name` on args (see EmulatedProgram::run).
  EmulatedRun run(const std::string& name, const std::vector<Argument>& args) {
    return program_.run(name, func(name), args);
  }

 private:
  EmulatedProgram program_;
  std::vector<std::pair<std::string, LoweredFunc>> funcs_;
  std::string log_;
  bool built_ = false;
};

// NaN-aware exact comparison of two arrays of the same dtype and shape; empty when equal,
// else a description of the first differences.
inline std::string compare_arrays(const NDArray& expected, const NDArray& actual) {
  if (expected.dtype() != actual.dtype() || expected.shape() != actual.shape())
    return "dtype or shape differ: " + expected.dtype().to_string() + expected.shape_string() + " vs " +
           actual.dtype().to_string() + actual.shape_string();
  DataType t = expected.dtype();
  size_t bytes = static_cast<size_t>(t.bytes());
  auto* a = static_cast<const unsigned char*>(expected.data());
  auto* b = static_cast<const unsigned char*>(actual.data());
  auto value = [&](const unsigned char* p, int64_t i) -> double {
    const unsigned char* q = p + static_cast<size_t>(i) * bytes;
    if (t == Float(32)) {
      float v;
      std::memcpy(&v, q, 4);
      return v;
    }
    if (t == Float(64)) {
      double v;
      std::memcpy(&v, q, 8);
      return v;
    }
    if (t == Float(16)) {
      uint16_t v;
      std::memcpy(&v, q, 2);
      return static_cast<float>(half::from_bits(v));
    }
    if (t == BFloat(16)) {
      uint16_t v;
      std::memcpy(&v, q, 2);
      return static_cast<float>(bfloat16::from_bits(v));
    }
    int64_t v = 0;
    std::memcpy(&v, q, bytes);  // little-endian: the low bytes
    return static_cast<double>(v);
  };
  std::string diff;
  int shown = 0;
  for (int64_t i = 0; i < expected.size(); ++i) {
    if (std::memcmp(a + i * bytes, b + i * bytes, bytes) == 0) continue;
    double x = value(a, i), y = value(b, i);
    if (t.is_float() && std::isnan(x) && std::isnan(y)) continue;
    if (shown++ < 8) diff += fmt::format("  [{}]: expected {} got {}\n", i, x, y);
  }
  if (shown > 8) diff += fmt::format("  ... {} elements differ\n", shown);
  return diff;
}

}  // namespace te::cuda_test
