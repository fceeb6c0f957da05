// The `te` command line, run as a user runs it: exit status, stdout and the one-line
// stderr of every error; results compared with interpret() of the same generator.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "te/autotune.h"
#include "te/generator.h"

using namespace te;
namespace fs = std::filesystem;

namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/te_cli_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `te ARGS` (a shell word list) in the scratch folder.
  Result te(const std::string& args) { return te_shell(TE_CLI_PATH " " + args); }
  // Runs a shell command (not te) in the scratch folder.
  Result te_shell(const std::string& command) {
    int raw = std::system(("cd " + dir_.string() + " && (" + command + ") >out.txt 2>err.txt").c_str());
    Result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = read(dir_ / "out.txt");
    r.err = read(dir_ / "err.txt");
    return r;
  }
  // The generator library with te's arguments after it.
  Result te(const std::string& command, const std::string& rest) {
    return te(command + " " TE_CLI_GENERATORS " " + rest);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

void expect_error(const Result& r, const std::string& message, int status = 1) {
  EXPECT_EQ(r.status, status);
  EXPECT_EQ(r.err, "te: " + message + "\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, ListsKernelsAndTheirParts) {
  Result r = te("list", "");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "bf16_scale cpu\ngpu_only cuda\ntile_scale cpu\nvadd cpu cuda\nrowsum tuning task rowsum/64\n"
            "conv_nchw compute (X, W, Y)\nconv_winograd compute (X, W, Y)\nmatmul compute (A, B, bias, C)\n");
}

TEST_F(CliTest, MissingOrBrokenLibraryIsOneLine) {
  expect_error(te("list /nonexistent/gen.so"), "generator: no such file: /nonexistent/gen.so");
  std::ofstream(path("bogus.so")) << "not a library";
  Result r = te("list bogus.so");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("te: generator: cannot load bogus.so: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST_F(CliTest, UnknownKernelNamesTheOnesThereAre) {
  expect_error(
      te("lower", "nope"),
      "generator: no kernel 'nope'; this generator has: bf16_scale, conv_nchw, conv_winograd, gpu_only, matmul, "
      "rowsum, tile_scale, vadd");
  expect_error(
      te("build", "nope -o out"),
      "generator: no kernel 'nope'; this generator has: bf16_scale, conv_nchw, conv_winograd, gpu_only, matmul, "
      "rowsum, tile_scale, vadd");
  expect_error(te("tune", "vadd --records r.jsonl"), "generator: no tuning task 'vadd'; this generator has: rowsum");
}

TEST_F(CliTest, MalformedCommandLinesExitWithTwo) {
  for (const char* args :
       {"", "frobnicate", "list", "run " TE_CLI_GENERATORS " vadd --bogus",
        "lower " TE_CLI_GENERATORS " vadd --target ptx", "run " TE_CLI_GENERATORS " vadd --repeat 0"}) {
    Result r = te(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.err.rfind("te: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
}

// One exit-status rule for every subcommand: 2 when the command line itself is wrong (an
// unknown option, a missing argument, a value out of its option's range or not of its
// kind, a --target that is not llvm, cuda or a triple), 1 when te fails doing the work.
// Ranges are said in plain words.
TEST_F(CliTest, OptionValuesOutOfRangeSayTheRangeAndExitWithTwo) {
  const std::string gen = TE_CLI_GENERATORS;
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"tune " + gen + " rowsum --records r.jsonl --trials -3",
       "--trials: expects a whole number of at least 1, not '-3'"},
      {"tune " + gen + " rowsum --records r.jsonl --trials 0",
       "--trials: expects a whole number of at least 1, not '0'"},
      {"tune " + gen + " rowsum --records r.jsonl --trials 99999999999",
       "--trials: expects at most 2147483647, not '99999999999'"},
      {"tune " + gen + " rowsum --records r.jsonl --repeat 0",
       "--repeat: expects a whole number of at least 1, not '0'"},
      {"tune " + gen + " rowsum --records r.jsonl --timeout 0",
       "--timeout: expects a number of seconds above 0, not '0'"},
      {"tune " + gen + " rowsum --records r.jsonl --early-stopping x",
       "--early-stopping: expects a whole number of at least 0, not 'x'"},
      {"run " + gen + " vadd --repeat 0", "--repeat: expects a whole number of at least 1, not '0'"},
      {"run " + gen + " vadd --number 0", "--number: expects a whole number of at least 1, not '0'"},
      {"run " + gen + " vadd --min-repeat-ms -1", "--min-repeat-ms: expects a whole number of at least 0, not '-1'"},
      {"auto-schedule " + gen + " matmul --trials -1", "--trials: expects a whole number of at least 0, not '-1'"},
      {"auto-schedule " + gen + " matmul --time-budget -1",
       "--time-budget: expects a number of seconds of at least 0, not '-1'"},
      {"auto-schedule " + gen + " matmul --threads 1.5", "--threads: expects a whole number of at least 0, not '1.5'"},
      {"lower " + gen + " vadd --target opencl", "--target: expects llvm (the cpu function) or cuda, not 'opencl'"},
      {"build " + gen + " vadd --target opencl",
       "--target: target 'opencl': unknown kind 'opencl' (expected llvm, cuda or an LLVM triple such as "
       "aarch64-linux-gnu)"},
      {"build " + gen + " vadd --target \"cuda -arch=sm90\"",
       "--target: target 'cuda -arch=sm90': -arch=sm90 is not a CUDA architecture (sm_80, sm_90, sm_90a, ...)"},
      {"auto-schedule " + gen + " matmul --target opencl",
       "--target: target 'opencl': unknown kind 'opencl' (expected llvm, cuda or an LLVM triple such as "
       "aarch64-linux-gnu)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    expect_error(te(c.args), c.message + " (see te --help)", 2);
  }
  // The work failing is 1 in every subcommand: a triple LLVM does not know, a missing file.
  EXPECT_EQ(te("build", "vadd --target nonsense-triple -o out").status, 1);
  for (const char* sub : {"lower", "build", "run", "tune"})
    EXPECT_EQ(te(std::string(sub) + " /nonexistent/gen.so vadd --records r.jsonl").status, 1) << sub;
}

TEST_F(CliTest, EverySubcommandHasManPageHelp) {
  for (const char* sub : {"list", "lower", "build", "run", "tune", "auto-schedule"}) {
    Result r = te(std::string(sub) + " --help");
    EXPECT_EQ(r.status, 0) << sub;
    EXPECT_NE(r.out.find("EXAMPLE"), std::string::npos) << sub << ":\n" << r.out;
  }
  Result top = te("--help");
  EXPECT_EQ(top.status, 0);
  EXPECT_NE(top.out.find("tune"), std::string::npos);
  EXPECT_NE(top.out.find("auto-schedule"), std::string::npos);
}

TEST_F(CliTest, LowerPrintsTheLoopNest) {
  Result r = te("lower", "vadd");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("func vadd(A: float32[n], B: float32[n], C: float32[n]) {", 0), 0u) << r.out;
  Result cuda = te("lower", "vadd --target cuda");
  EXPECT_NE(cuda.out.find("launch_thread blockIdx.x"), std::string::npos) << cuda.out;
  expect_error(te("lower", "gpu_only"), "kernel 'gpu_only' has no cpu function");
}

TEST_F(CliTest, LowerDumpsTheIrAfterAPass) {
  std::string pass = lower_pass_names().back();
  Result r = te("lower", "vadd --dump-ir " + pass);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(pass), std::string::npos) << r.err;
  Result bad = te("lower", "vadd --dump-ir nosuchpass");
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err.rfind("te: --dump-ir: unknown pass 'nosuchpass'; the passes are: all, ", 0), 0u) << bad.err;
}

TEST_F(CliTest, BuildWritesObjectLibraryHeaderAndCuda) {
  Result r = te("build", "vadd -o out");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "out/vadd.o\nout/vadd.h\nout/vadd.so\n");
  EXPECT_NE(read(dir_ / "out/vadd.h").find("int32_t vadd(float* A, float* B, float* C, int32_t n);"),
            std::string::npos);
  Result cuda = te("build", "vadd --target cuda -o out");
  EXPECT_EQ(cuda.status, 0) << cuda.err;
  EXPECT_EQ(cuda.out, "out/vadd.cu\nout/vadd_cuda.h\n");
  EXPECT_NE(read(dir_ / "out/vadd.cu").find("__global__"), std::string::npos);
  // A cuda target's arch: the file is for that GPU.
  Result hopper = te("build", "vadd --target \"cuda -arch=sm_90a\" -o arch");
  EXPECT_EQ(hopper.status, 0) << hopper.err;
  EXPECT_NE(read(dir_ / "arch/vadd.cu").find("#error \"te generated this file for sm_90a"), std::string::npos);
  EXPECT_EQ(read(dir_ / "out/vadd.cu").find("#error"), std::string::npos);
  expect_error(te("build", "gpu_only -o out"), "generator: kernel 'gpu_only' has no cpu function (only cuda)");
  expect_error(te("build", "vadd --target cuda --mcpu x86-64-v3 -o out"),
               "--mcpu and --mattr apply to CPU targets, not to --target cuda");
}

// The kernel library names libte_runtime with a RUNPATH that finds it: a program that
// only dlopens it (no te linked) calls the kernel. The CUDA launcher is KERNEL_cuda (its
// header's name; the CPU function KERNEL links beside it) and its header is C.
TEST_F(CliTest, BuiltLibraryLoadsAloneAndCudaHeaderIsC) {
  ASSERT_EQ(te("build", "vadd -o out").status, 0);
  std::ofstream(path("loader.c")) << R"(#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
int main(void) {
  void* lib = dlopen("out/vadd.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) { printf("dlopen: %s\n", dlerror()); return 1; }
  int32_t (*vadd)(float*, float*, float*, int32_t) = (int32_t (*)(float*, float*, float*, int32_t))dlsym(lib, "vadd");
  float a[3] = {1, 2, 3}, b[3] = {10, 20, 30}, c[3] = {0, 0, 0};
  if (!vadd || vadd(a, b, c, 3) != 0) return 2;
  printf("%g %g %g\n", c[0], c[1], c[2]);
  return 0;
}
)";
  Result loader = te_shell("cc -std=c99 -Wall -Werror loader.c -o loader -ldl && ./loader");
  EXPECT_EQ(loader.status, 0) << loader.out << loader.err;
  EXPECT_EQ(loader.out, "11 22 33\n");
  Result dynamic = te_shell("readelf -d out/vadd.so");
  EXPECT_NE(dynamic.out.find("(NEEDED)             Shared library: [libte_runtime.so"), std::string::npos)
      << dynamic.out;
  EXPECT_NE(dynamic.out.find("(RUNPATH)            Library runpath: [$ORIGIN:/"), std::string::npos) << dynamic.out;

  ASSERT_EQ(te("build", "vadd --target cuda -o out").status, 0);
  const std::string header = read(dir_ / "out/vadd_cuda.h");
  EXPECT_NE(header.find("cudaError_t vadd_cuda(float* A, float* B, float* C, int32_t n, cudaStream_t stream);"),
            std::string::npos)
      << header;
  EXPECT_NE(read(dir_ / "out/vadd.cu").find("cudaError_t vadd_cuda("), std::string::npos);
  // A stand-in cuda_runtime.h: the header must be C (and C++) that a host compiler takes.
  fs::create_directories(dir_ / "stub");
  std::ofstream(path("stub/cuda_runtime.h")) << "typedef int cudaError_t;\ntypedef struct CUstream_st* cudaStream_t;\n";
  std::ofstream(path("use.c")) << "#include \"vadd_cuda.h\"\n"
                                  "cudaError_t call(float* a, cudaStream_t s) { return vadd_cuda(a, a, a, 1, s); }\n";
  Result c = te_shell("cc -std=c99 -Wall -Werror -fsyntax-only -Istub -Iout use.c");
  EXPECT_EQ(c.status, 0) << c.err;
  Result cxx = te_shell("c++ -x c++ -Wall -Werror -fsyntax-only -Istub -Iout use.c");
  EXPECT_EQ(cxx.status, 0) << cxx.err;
}

// te build compiles a kernel once (the .so is linked from the .o), and a repeated build
// in a new process takes the object from the persistent compile cache, byte for byte.
TEST_F(CliTest, BuildCompilesOnceAndCachesOnDisk) {
  const std::string build = "TE_LOG=info " TE_CLI_PATH " build " TE_CLI_GENERATORS " vadd";
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  Result cold = te_shell("TE_CACHE=0 " + build + " -o cold");
  ASSERT_EQ(cold.status, 0) << cold.err;
  EXPECT_EQ(count(cold.err, "object 'vadd': compiling for"), 1u) << cold.err;
  EXPECT_FALSE(fs::exists(dir_ / "cache"));

  Result first = te_shell("TE_CACHE=1 TE_CACHE_DIR=cache " + build + " -o first");
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_EQ(count(first.err, "compiling for"), 1u) << first.err;
  Result again = te_shell("TE_CACHE=1 TE_CACHE_DIR=cache " + build + " -o again");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(count(again.err, "compiling for"), 0u) << again.err;
  EXPECT_EQ(count(again.err, "object 'vadd': from the compile cache"), 1u) << again.err;
  EXPECT_EQ(read(dir_ / "again/vadd.o"), read(dir_ / "first/vadd.o"));
  EXPECT_EQ(read(dir_ / "again/vadd.o"), read(dir_ / "cold/vadd.o"));
}

TEST_F(CliTest, BuildForAnotherTarget) {
  Result r = te("build", "vadd --target aarch64-linux-gnu --mcpu cortex-a78 --no-shared -o arm");
  EXPECT_EQ(r.status, 0) << r.err;
  std::string object = read(dir_ / "arm/vadd.o");
  ASSERT_GT(object.size(), 20u);
  EXPECT_EQ(object.substr(1, 3), "ELF");
  EXPECT_EQ(static_cast<unsigned char>(object[18]), 183);  // e_machine: EM_AARCH64
  Result bad = te("build", "vadd --target aarch64-linux-gnu --mcpu pentium4 -o arm");
  expect_error(bad,
               "generator: kernel 'vadd': target: 'pentium4' is not a CPU of "
               "aarch64-unknown-linux-gnu (LLVM's names: cortex-a78, neoverse-n1, x86-64-v3, "
               "skylake-avx512, ...)");
  expect_error(te("build", "vadd --target nonsense-triple -o arm"),
               "generator: kernel 'vadd': target: LLVM does not know the triple 'nonsense-triple' "
               "(No available targets are compatible with triple \"nonsense-triple\")");
}

// Writes a float32 .npy of n values in the scratch folder.
NDArray write_input(const fs::path& file, int n, float scale) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = scale * float(i % 13) - 1.5f;
  NDArray a = NDArray::from_vector(v, {n});
  a.save_npy(file.string());
  return a;
}

TEST_F(CliTest, RunMatchesInterpret) {
  NDArray a = write_input(dir_ / "a.npy", 1000, 0.5f), b = write_input(dir_ / "b.npy", 1000, 2.0f);
  Result r = te("run", "vadd --inputs a.npy b.npy --outputs out");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "out/vadd.C.npy\n");
  load_generator_library(TE_CLI_GENERATORS);
  NDArray expected = NDArray::empty({1000}, Float(32));
  interpret(run_generator("vadd").cpu, {a, b, expected});
  EXPECT_EQ(NDArray::load_npy(path("out/vadd.C.npy")).to_vector<float>(), expected.to_vector<float>());
}

// Outputs are named KERNEL.PARAM.npy: two kernels' runs into one folder keep both.
TEST_F(CliTest, RunOutputsOfTwoKernelsShareAFolder) {
  write_input(dir_ / "a.npy", 8, 1.0f);
  write_input(dir_ / "b.npy", 8, 1.0f);
  ASSERT_EQ(te("run", "vadd --inputs a.npy b.npy --outputs out").status, 0);
  Result r = te("run", "tile_scale --inputs a.npy --shape m=8 --param alpha=1 --outputs out");
  EXPECT_EQ(r.out, "out/tile_scale.Out.npy\n");
  EXPECT_TRUE(fs::exists(dir_ / "out/vadd.C.npy"));
  EXPECT_TRUE(fs::exists(dir_ / "out/tile_scale.Out.npy"));
}

// NumPy has no bfloat16: te run reads a bfloat16 input from uint16 bits and writes its
// bfloat16 output the same way.
TEST_F(CliTest, RunReadsAndWritesBFloat16AsUint16Bits) {
  std::vector<uint16_t> bits = {0x3f80, 0xc040, 0x3dcd, 0x7f7f, 0x0001, 0x8000};
  NDArray::from_vector(bits, {6}).save_npy(path("a.npy"));
  Result r = te("run", "bf16_scale --inputs a.npy --outputs out");
  EXPECT_EQ(r.status, 0) << r.err;
  NDArray a = NDArray::load_npy(path("a.npy"), BFloat(16)), expected = NDArray::empty({6}, BFloat(16));
  load_generator_library(TE_CLI_GENERATORS);
  interpret(run_generator("bf16_scale").cpu, {a, expected});
  NDArray out = NDArray::load_npy(path("out/bf16_scale.B.npy"));
  EXPECT_EQ(out.dtype(), UInt(16));
  std::vector<uint16_t> want(6);
  std::memcpy(want.data(), expected.data(), 12);
  EXPECT_EQ(out.to_vector<uint16_t>(), want);
  EXPECT_EQ(want[0], 0x4080);  // 1 * 3 + 1 = 4
}

TEST_F(CliTest, RunWithShapeAndScalarParameters) {
  NDArray a = write_input(dir_ / "a.npy", 7, 1.0f);
  Result r = te("run", "tile_scale --inputs a.npy --shape m=20 --param alpha=0.5 --outputs out");
  EXPECT_EQ(r.status, 0) << r.err;
  load_generator_library(TE_CLI_GENERATORS);
  NDArray expected = NDArray::empty({20}, Float(32));
  interpret(run_generator("tile_scale").cpu, {a, expected, 0.5});
  EXPECT_EQ(NDArray::load_npy(path("out/tile_scale.Out.npy")).to_vector<float>(), expected.to_vector<float>());

  expect_error(te("run", "tile_scale --inputs a.npy --param alpha=0.5"),
               "tile_scale: the shape of output 'Out' needs m, which no input binds; give its value");
  expect_error(te("run", "tile_scale --inputs a.npy --shape m=20"),
               "tile_scale: the scalar parameter 'alpha' needs a value");
  expect_error(te("run", "tile_scale --inputs a.npy --shape m=20 --shape k=3 --param alpha=1"),
               "tile_scale: no shape variable or scalar parameter 'k' (it has: n, m, alpha)");
  expect_error(te("run", "tile_scale --inputs a.npy --shape m=x"), "--shape 'm=x': 'x' is not an integer");
  expect_error(te("run", "tile_scale --inputs a.npy --shape m"), "--shape 'm': expected NAME=VALUE");
  expect_error(te("run", "tile_scale --inputs a.npy --shape n=3 --shape m=2 --param alpha=1"),
               "tile_scale: n is 3 (given or bound earlier) but input 'A' has 7 in dimension 0");
}

TEST_F(CliTest, RunRejectsWrongInputsInOneLine) {
  write_input(dir_ / "a.npy", 10, 1.0f);
  write_input(dir_ / "short.npy", 9, 1.0f);
  NDArray::from_vector(std::vector<double>(10, 1.0), {10}).save_npy(path("f64.npy"));
  expect_error(te("run", "vadd --inputs a.npy"), "vadd: takes 2 inputs (A, B), got 1");
  expect_error(te("run", "vadd --inputs a.npy missing.npy"),
               "NDArray::load_npy: cannot read 'missing.npy': no such file");
  Result dtype = te("run", "vadd --inputs a.npy f64.npy");
  EXPECT_EQ(dtype.status, 1);
  EXPECT_NE(dtype.err.find("float64"), std::string::npos) << dtype.err;
  EXPECT_EQ(std::count(dtype.err.begin(), dtype.err.end(), '\n'), 1) << dtype.err;
  Result shape = te("run", "vadd --inputs a.npy short.npy");
  EXPECT_EQ(shape.status, 1);
  EXPECT_NE(shape.err.find("'B'"), std::string::npos) << shape.err;
  EXPECT_EQ(std::count(shape.err.begin(), shape.err.end(), '\n'), 1) << shape.err;
  // A wrong rank is named before any shape variable is bound from it.
  NDArray::from_vector(std::vector<float>(1000, 1.0f), {10, 100}).save_npy(path("a2d.npy"));
  write_input(dir_ / "b1000.npy", 1000, 1.0f);
  expect_error(te("run", "vadd --inputs a2d.npy b1000.npy"),
               "vadd: input 'A' has rank 2 (shape (10, 100)), expected rank 1");
  expect_error(te("run", "gpu_only --inputs a.npy"),
               "kernel 'gpu_only' has no cpu function (te run runs the cpu function)");
}

TEST_F(CliTest, RunPrintsTimeAsTvmcDoes) {
  write_input(dir_ / "a.npy", 4096, 1.0f);
  write_input(dir_ / "b.npy", 4096, 1.0f);
  Result r = te("run", "vadd --inputs a.npy b.npy --print-time --repeat 5 --number 3");
  EXPECT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::string title, header, values;
  std::getline(lines, title);
  std::getline(lines, header);
  std::getline(lines, values);
  EXPECT_EQ(title, "Execution time summary:");
  EXPECT_EQ(header, "    mean (ms)  median (ms)     max (ms)     min (ms)     std (ms)");
  std::istringstream numbers(values);
  double mean, median, max, min, sd;
  ASSERT_TRUE(numbers >> mean >> median >> max >> min >> sd) << values;
  EXPECT_LE(min, median);
  EXPECT_LE(median, max);
  EXPECT_GE(sd, 0);
}

TEST_F(CliTest, TuneWritesRecordsThatBuildAndRunUse) {
  Result r = te("tune", "rowsum --trials 4 --tuner grid --repeat 1 --records r.jsonl");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("rowsum/64: measured 4 (resumed 0), 0 failed\nbest: rows=", 0), 0u) << r.out;
  std::istringstream records(read(dir_ / "r.jsonl"));
  int lines = 0;
  for (std::string line; std::getline(records, line);) ++lines;
  EXPECT_EQ(lines, 4);
  Result built = te("build", "rowsum --records r.jsonl --no-shared -o out");
  EXPECT_EQ(built.status, 0) << built.err;
  EXPECT_EQ(built.out, "out/rowsum.o\nout/rowsum.h\n");
  Result lowered = te("lower", "rowsum --records r.jsonl");
  EXPECT_NE(lowered.out.find("i.outer"), std::string::npos) << lowered.out;
  expect_error(te("lower", "vadd --records r.jsonl"),
               "generator: kernel 'vadd' is a TE_GENERATOR, which has no knobs: tuning records "
               "apply to TE_TUNING_TASKs (rowsum)");
  // Records are kept per target: te tune --mcpu measures for that CPU, te build --mcpu uses them.
  expect_error(te("tune", "rowsum --target cuda --records r.jsonl"),
               "--target cuda: te tune measures kernels on this machine's CPU; name an LLVM target it runs");
  Result foreign = te("tune", "rowsum --target aarch64-linux-gnu --trials 2 --records r.jsonl");
  EXPECT_EQ(foreign.status, 1);
  EXPECT_NE(foreign.err.find("te: tune 'rowsum/64': the JIT runs code on this host ("), std::string::npos)
      << foreign.err;
#if defined(__x86_64__)
  Result untuned = te("build", "rowsum --mcpu x86-64 --records r.jsonl --no-shared -o out2");
  EXPECT_EQ(untuned.status, 1);
  EXPECT_NE(untuned.err.find("holds 4 records of 'rowsum/64', measured for another target"), std::string::npos)
      << untuned.err;
  Result baseline = te("tune", "rowsum --mcpu x86-64 --trials 2 --tuner grid --repeat 1 --records r.jsonl");
  EXPECT_EQ(baseline.status, 0) << baseline.err;
  EXPECT_EQ(baseline.out.rfind("rowsum/64: measured 2 (resumed 0), 0 failed\n", 0), 0u) << baseline.out;
  Result tuned = te("build", "rowsum --mcpu x86-64 --records r.jsonl --no-shared -o out2");
  EXPECT_EQ(tuned.status, 0) << tuned.err;
#endif
}

// Every way a --records file can be wrong is an error naming the file (exit 1), for a
// tuning task and a TE_COMPUTE, in lower, build and run alike: never the untuned schedule
// in silence. A damaged last line (a killed run) is one warning; the rest is used.
TEST_F(CliTest, RecordsFailureModes) {
  load_generator_library(TE_CLI_GENERATORS);
  autotune::Task task = tuning_task("rowsum");
  auto line = [&](const std::string& key, bool ok, const std::string& target = "") {
    autotune::Record r = autotune::make_record(key, task.space.at(1), ok, ok ? "" : "crashed",
                                               ok ? std::vector<double>{0.001} : std::vector<double>{}, 0);
    if (!target.empty()) r.target = target;
    return autotune::format_record(r) + "\n";
  };
  const std::string good = line("rowsum/64", true);
  fs::create_directories(dir_ / "recdir");
  std::ofstream(path("empty.jsonl"));
  std::ofstream(path("garbage.jsonl"), std::ios::binary) << "\x7f"
                                                            "ELF\x01\x02 not records\n"
                                                         << std::string(500, 'x') << "\n";
  std::ofstream(path("truncated.jsonl")) << good << good.substr(0, 30);
  std::ofstream(path("other_task.jsonl")) << line("other/1", true);
  std::ofstream(path("other_host.jsonl"))
      << line("rowsum/64", true, "riscv64-unknown-linux-gnu -mcpu=generic features=0");
  std::ofstream(path("failed.jsonl")) << line("rowsum/64", false);
  const std::string prefix = "generator: kernel 'rowsum': tuning records: ";
  struct Case {
    const char* file;
    std::string message;
  };
  const Case cases[] = {
      {"missing.jsonl", prefix + "'missing.jsonl' does not exist (te tune or te auto-schedule --trials N write it)"},
      {"recdir", prefix + "'recdir' is a directory, not a records file"},
      {"empty.jsonl", prefix + "'empty.jsonl' is empty (te tune or te auto-schedule --trials N fill it)"},
      {"garbage.jsonl",
       prefix + "no line of 'garbage.jsonl' is a tuning record (first at line 1: tuning record: JSON: "},
      {"other_task.jsonl", prefix + "'other_task.jsonl' holds no record of 'rowsum/64' (its records are of other/1)"},
      {"other_host.jsonl", prefix + "'other_host.jsonl' holds 1 record of 'rowsum/64', measured for another target "
                                    "(riscv64-unknown-linux-gnu -mcpu=generic features=0), none for this one ("},
      {"failed.jsonl", prefix + "'failed.jsonl' holds 1 record of 'rowsum/64', a failed config"},
  };
  for (const Case& c : cases) {
    for (const char* command : {"lower", "build", "run"}) {
      const std::string args = std::string(command == std::string("build") ? "rowsum --no-shared -o out" : "rowsum") +
                               " --records " + c.file;
      SCOPED_TRACE(std::string(command) + " " + args);
      Result r = te(command, args);
      EXPECT_EQ(r.status, 1);
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(r.err.rfind("te: " + c.message, 0), 0u) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_EQ(r.err.find('\x7f'), std::string::npos) << "raw bytes echoed";
    }
  }
  // The truncated last line: one warning line, and the good record is used.
  Result truncated = te("lower", "rowsum --records truncated.jsonl");
  EXPECT_EQ(truncated.status, 0) << truncated.err;
  EXPECT_NE(truncated.out.find("i.outer"), std::string::npos) << truncated.out;
  EXPECT_EQ(truncated.err.rfind("[te warn] tuning records: 'truncated.jsonl': 1 line that is not a tuning record was "
                                "skipped (first at line 2: tuning record: JSON: ",
                                0),
            0u)
      << truncated.err;
  EXPECT_EQ(std::count(truncated.err.begin(), truncated.err.end(), '\n'), 1) << truncated.err;
  // te tune neither resumes from nor appends to a file that holds no record.
  const std::string garbage = read(dir_ / "garbage.jsonl");
  Result tune = te("tune", "rowsum --trials 2 --tuner grid --repeat 1 --records garbage.jsonl");
  EXPECT_EQ(tune.status, 1);
  EXPECT_EQ(tune.err.rfind("te: tuning records: no line of 'garbage.jsonl' is a tuning record", 0), 0u) << tune.err;
  EXPECT_EQ(read(dir_ / "garbage.jsonl"), garbage);
  // A TE_COMPUTE: a missing file, and records searched for other options.
  expect_error(te("lower", "matmul --records missing.jsonl"),
               "generator: kernel 'matmul': auto_schedule: the records file 'missing.jsonl' does not exist; with "
               "trials = 0 the records are only read (give trials > 0 to search and write them)");
  expect_error(te("lower", "matmul --records empty.jsonl"),
               "generator: kernel 'matmul': tuning records: 'empty.jsonl' is empty (te tune or te auto-schedule "
               "--trials N fill it)");
  Result searched = te("auto-schedule", "matmul -q --trials 2 --threads 1 --records t1.jsonl --no-shared -o out");
  ASSERT_EQ(searched.status, 0) << searched.err;
  Result other = te("lower", "matmul --records t1.jsonl");
  EXPECT_EQ(other.status, 1);
  EXPECT_NE(other.err.find("'t1.jsonl' holds no successful record of 'C' for target 'llvm', threads=0"),
            std::string::npos)
      << other.err;
  EXPECT_EQ(te("auto-schedule", "matmul -q --threads 1 --records t1.jsonl --no-shared -o out").status, 0);
}

// matmul's inputs: A 64 x 32, B 32 x 48, bias 48, small integers (exact in float).
struct MatmulInputs {
  NDArray a, b, bias;
};
MatmulInputs write_matmul_inputs(const fs::path& dir) {
  auto make = [](std::vector<int64_t> shape, int salt) {
    NDArray x = NDArray::empty(shape, Float(32));
    float* p = static_cast<float*>(x.data());
    for (int64_t i = 0; i < x.size(); ++i) p[i] = float((i * 7 + salt) % 11) - 5.0f;
    return x;
  };
  MatmulInputs in{make({64, 32}, 1), make({32, 48}, 2), make({48}, 3)};
  in.a.save_npy((dir / "a.npy").string());
  in.b.save_npy((dir / "b.npy").string());
  in.bias.save_npy((dir / "bias.npy").string());
  return in;
}

std::vector<float> matmul_reference(const MatmulInputs& in) {
  const float* a = static_cast<const float*>(in.a.data());
  const float* b = static_cast<const float*>(in.b.data());
  const float* bias = static_cast<const float*>(in.bias.data());
  std::vector<float> c(64 * 48);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 48; ++j) {
      float acc = 0;
      for (int k = 0; k < 32; ++k) acc += a[i * 32 + k] * b[k * 48 + j];
      c[i * 48 + j] = acc + bias[j];
    }
  return c;
}

TEST_F(CliTest, AutoScheduleBuildsAComputeThatRunsAsInterpretAndCxxDo) {
  Result r = te("auto-schedule", "matmul --no-shared -o out");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "out/matmul.o\nout/matmul.h\n");
  EXPECT_NE(r.err.find("[auto_schedule]"), std::string::npos) << r.err;  // the rules' decisions
  EXPECT_EQ(te("auto-schedule", "matmul -q --no-shared -o out").err, "");
  Result cuda = te("auto-schedule", "matmul -q --target cuda -o out");
  EXPECT_EQ(cuda.status, 0) << cuda.err;
  EXPECT_EQ(cuda.out, "out/matmul.cu\nout/matmul_cuda.h\n");
  EXPECT_NE(read(dir_ / "out/matmul.cu").find("blockIdx.x"), std::string::npos);
  Result sm80 = te("auto-schedule", "matmul -q --target \"cuda -arch=sm_80\" -o sm80");
  EXPECT_EQ(sm80.status, 0) << sm80.err;
  EXPECT_NE(read(dir_ / "sm80/matmul.cu").find("for sm_80 or newer"), std::string::npos);
  // te run and te lower schedule a TE_COMPUTE with the same rules.
  MatmulInputs in = write_matmul_inputs(dir_);
  Result run = te("run", "matmul --inputs a.npy b.npy bias.npy --outputs res");
  EXPECT_EQ(run.status, 0) << run.err;
  std::vector<float> expected = matmul_reference(in);
  EXPECT_EQ(NDArray::load_npy(path("res/matmul.C.npy")).to_vector<float>(), expected);
  load_generator_library(TE_CLI_GENERATORS);
  NDArray c = NDArray::empty({64, 48}, Float(32));
  LoweredFunc rules = find_kernel("matmul").cpu;
  interpret(rules, {in.a, in.b, in.bias, c});
  EXPECT_EQ(c.to_vector<float>(), expected);
  Result lowered = te("lower", "matmul");
  EXPECT_EQ(lowered.out, to_string(rules));
  EXPECT_NE(lowered.out.find("ramp("), std::string::npos) << lowered.out;  // vector code
}

TEST_F(CliTest, AutoScheduleSearchWritesRecordsThatLowerAndRunUse) {
  Result r = te("auto-schedule", "matmul --trials 3 --records as.jsonl --no-shared -o out");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("best"), std::string::npos) << r.err;  // the search's progress
  EXPECT_NE(r.err.find("distinct loop nests"), std::string::npos) << r.err;
  std::istringstream records(read(dir_ / "as.jsonl"));
  int lines = 0;
  for (std::string line; std::getline(records, line);) ++lines;
  EXPECT_GE(lines, 3);      // 3 configs,
  EXPECT_LE(lines, 3 + 8);  // and the close calls and the rules' config measured twice more
  // Read back without measuring: the file is unchanged, the kernel is the searched one.
  const std::string recorded = read(dir_ / "as.jsonl");
  Result again = te("auto-schedule", "matmul -q --records as.jsonl --no-shared -o out2");
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(read(dir_ / "as.jsonl"), recorded);
  Result lowered = te("lower", "matmul --records as.jsonl");
  EXPECT_EQ(lowered.status, 0) << lowered.err;
  load_generator_library(TE_CLI_GENERATORS);
  AutoScheduleOptions o;
  o.records = path("as.jsonl");
  LoweredFunc best = auto_schedule_kernel("matmul", o).cpu;
  EXPECT_EQ(lowered.out, to_string(best));
  MatmulInputs in = write_matmul_inputs(dir_);
  NDArray c = NDArray::empty({64, 48}, Float(32));
  interpret(best, {in.a, in.b, in.bias, c});
  EXPECT_EQ(c.to_vector<float>(), matmul_reference(in));
  EXPECT_EQ(read(dir_ / "as.jsonl"), recorded);
}

// --constant-inputs: the rules take an NCHW convolution's OIHW weights laid out once (the
// channels last), and te auto-schedule writes the function that lays them out beside
// the kernel; the two give the convolution's values.
TEST_F(CliTest, AutoScheduleTakesConstantInputsPretransformed) {
  Result r = te("auto-schedule", "conv_nchw -q --constant-inputs W --no-shared -o out");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "out/conv_nchw.o\nout/conv_nchw.h\nout/conv_nchw_pretransform_W.o\nout/conv_nchw_pretransform_W.h\n");
  const std::string pack_header = read(dir_ / "out/conv_nchw_pretransform_W.h");
  EXPECT_NE(pack_header.find("conv_nchw_pretransform_W(float* W, float* W_2310)"), std::string::npos) << pack_header;
  EXPECT_NE(read(dir_ / "out/conv_nchw.h").find("float* W_2310"), std::string::npos);
  // Without the flag, the weights are read as given: no pretransform function.
  EXPECT_EQ(te("auto-schedule", "conv_nchw -q --no-shared -o plain").out, "plain/conv_nchw.o\nplain/conv_nchw.h\n");

  load_generator_library(TE_CLI_GENERATORS);
  GeneratedKernel k = auto_schedule_kernel("conv_nchw", AutoScheduleOptions(), {"W"});
  ASSERT_EQ(k.cpu_pretransforms.size(), 1u);
  std::vector<float> x(8 * 10 * 10), w(16 * 8 * 3 * 3);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 11) - 5);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 7) - 3);
  NDArray packed = NDArray::empty({3, 3, 8, 16}, Float(32)), y = NDArray::empty({1, 16, 8, 8}, Float(32));
  interpret(k.cpu_pretransforms[0], {NDArray::from_vector(w, {16, 8, 3, 3}), packed});
  interpret(k.cpu, {NDArray::from_vector(x, {1, 8, 10, 10}), packed, y});
  std::vector<float> want;
  for (int o = 0; o < 16; ++o)
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) {
        float acc = 0;
        for (int c = 0; c < 8; ++c)
          for (int p = 0; p < 3; ++p)
            for (int q = 0; q < 3; ++q) acc += x[(c * 10 + i + p) * 10 + j + q] * w[((o * 8 + c) * 3 + p) * 3 + q];
        want.push_back(acc);
      }
  EXPECT_EQ(y.to_vector<float>(), want);  // small integers: every sum exact
  expect_error(te("auto-schedule", "conv_nchw --constant-inputs V -o out"),
               "generator: computation 'conv_nchw' has no input 'V' to take as constant; its inputs: X, W");
  expect_error(te("auto-schedule", "conv_nchw --constant-inputs W,Y -o out"),
               "generator: computation 'conv_nchw' has no input 'Y' to take as constant; its inputs: X, W");
  AutoScheduleOptions both;
  both.constant_inputs = {compute_definition("conv_nchw").args[1]};
  try {
    auto_schedule_kernel("conv_nchw", both, {"W"});
    ADD_FAILURE() << "constant inputs given twice";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "generator: kernel 'conv_nchw': constant inputs given both by name and as "
                 "AutoScheduleOptions::constant_inputs");
  }
}

// A 3x3 convolution with 16 channels each way: Winograd's F(2x2, 3x3), its constant
// weights transformed once by the function written beside the kernel (G g Gᵀ, then
// blocked by columns); the two give the convolution's values.
TEST_F(CliTest, AutoScheduleWritesTheWinogradWeightTransform) {
  Result r = te("auto-schedule", "conv_winograd -q --constant-inputs W --no-shared -o out");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "out/conv_winograd.o\nout/conv_winograd.h\nout/conv_winograd_pretransform_W.o\n"
            "out/conv_winograd_pretransform_W.h\n");
  const std::string header = read(dir_ / "out/conv_winograd_pretransform_W.h");
  EXPECT_NE(header.find("conv_winograd_pretransform_W(float* W, float* Y_wino_weights"), std::string::npos) << header;

  load_generator_library(TE_CLI_GENERATORS);
  GeneratedKernel k = auto_schedule_kernel("conv_winograd", AutoScheduleOptions(), {"W"});
  ASSERT_EQ(k.cpu_pretransforms.size(), 1u);
  EXPECT_NE(to_string(k.cpu.body).find("Y.wino_product"), std::string::npos) << k.cpu.body;
  std::vector<float> x(10 * 10 * 16), w(3 * 3 * 16 * 16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 11) - 5);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 7) - 3);
  std::vector<int64_t> taken_shape;
  for (const Expr& e : k.cpu.params[1].buffer->shape) taken_shape.push_back(*as_const_int(e));
  NDArray taken = NDArray::empty(taken_shape, Float(32)), y = NDArray::empty({1, 8, 8, 16}, Float(32));
  interpret(k.cpu_pretransforms[0], {NDArray::from_vector(w, {3, 3, 16, 16}), taken});
  interpret(k.cpu, {NDArray::from_vector(x, {1, 10, 10, 16}), taken, y});
  const std::vector<float> got = y.to_vector<float>();
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      for (int o = 0; o < 16; ++o) {
        float acc = 0;
        for (int p = 0; p < 3; ++p)
          for (int q = 0; q < 3; ++q)
            for (int c = 0; c < 16; ++c) acc += x[((i + p) * 10 + j + q) * 16 + c] * w[((p * 3 + q) * 16 + c) * 16 + o];
        // Small integers: the transforms' halves and sums stay exact.
        ASSERT_EQ(got[size_t((i * 8 + j) * 16 + o)], acc) << i << " " << j << " " << o;
      }
}

TEST_F(CliTest, AutoScheduleErrorsAreOneLine) {
  expect_error(te("auto-schedule", "vadd -o out"),
               "generator: no computation 'vadd'; this generator has: conv_nchw, conv_winograd, matmul");
  expect_error(te("auto-schedule", "matmul --records missing.jsonl -o out"),
               "generator: kernel 'matmul': auto_schedule: the records file 'missing.jsonl' does not exist; with "
               "trials = 0 the records are only read (give trials > 0 to search and write them)");
  expect_error(te("auto-schedule", "matmul --trials 4 --target aarch64-linux-gnu -o out"),
               "--trials 4 measures kernels on this machine's CPU, so it cannot search for --target "
               "aarch64-linux-gnu; search with --target llvm, or give --trials 0 (the rules)");
  expect_error(te("auto-schedule", "matmul --trials 4 --target cuda -o out"),
               "generator: kernel 'matmul': auto_schedule: AutoScheduleOptions::trials is 4, but te cannot run "
               "CUDA kernels in this process to measure them (it emits .cu files for nvcc); use trials = 0 (the "
               "rules alone) for target \"cuda\"");
  expect_error(te("auto-schedule", "matmul --vector-bits 100 -o out"),
               "generator: kernel 'matmul': auto_schedule: AutoScheduleOptions::target: target 'llvm "
               "-vector-bits=100': vector_bits is 100; use 0 (the CPU's widest) or a power of two from 64 to 2048");
  Result negative = te("auto-schedule", "matmul --trials -1 -o out");
  EXPECT_EQ(negative.status, 2) << negative.err;
}

TEST_F(CliTest, AutoScheduleForAnotherTargetUsesItsVectors) {
  Result r = te("auto-schedule", "matmul -q --target aarch64-linux-gnu --mcpu neoverse-n1 --no-shared -o out");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "out/matmul.o\nout/matmul.h\n");
  std::string object = read(dir_ / "out/matmul.o");
  EXPECT_EQ(object.substr(1, 3), "ELF");
  EXPECT_EQ(static_cast<unsigned char>(object[18]), 183);  // e_machine: EM_AARCH64
}

}  // namespace
