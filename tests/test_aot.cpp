// Ahead of time: export_object / export_library / export_header, and plain C programs
// compiled with `cc` against them that link nothing of te but libte_runtime.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "te/runtime/c_runtime_api.h"
#include "te/te.h"
#include "c_program_util.h"
#include "test_llvm_util.h"

using namespace te;
using namespace te::llvm_test;
using namespace te::c_program_test;

namespace {

// C[i] = A[i] + B[i]: split by 8, parallel outer loop, vectorized inner, predicated tail.
LoweredFunc vadd() {
  Var n("n"), xo("xo");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n}), C("C", Float(32), {n});
  Expr idx = ramp(xo * 8, 1, 8);
  Expr live = idx < broadcast(n, 8);
  Stmt body = parallel(xo, 0, (n + 7) / 8, store(C, load(A, {idx}, live) + load(B, {idx}, live), {idx}, live));
  return make_func("vadd", {buffer_param(A), buffer_param(B), buffer_param(C)}, body);
}

// y[i] = alpha * x[i] if x[i] >= 0, failing on a negative x, over an n x m array.
LoweredFunc scale_checked() {
  Var n("n"), m("m"), i("i"), alpha("alpha", Float(64));
  Buffer X("x", Float(64), {n, m}), Y("y", Float(64), {n, m});
  Stmt body = serial(i, 0, n * m,
                     assert_stmt(load(X, {i}) >= 0.0, "x must be non-negative", store(Y, load(X, {i}) * alpha, {i})));
  return make_func("scale_checked", {buffer_param(X), buffer_param(Y), scalar_param(alpha)}, body);
}

std::string include_dir() { return std::string(TE_TEST_DATA_DIR) + "/../../include"; }

const char* kProgram = R"(
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "te/runtime/c_runtime_api.h"

static int check_vadd(int32_t n) {
  float* a = malloc(sizeof(float) * (size_t)(n + 1));
  float* b = malloc(sizeof(float) * (size_t)(n + 1));
  float* c = malloc(sizeof(float) * (size_t)(n + 1));
  for (int32_t i = 0; i < n; ++i) { a[i] = 0.5f * (float)i; b[i] = 3.0f - (float)i; }
  c[n] = 42.0f;  /* just past the end: must stay untouched */
  if (vadd(a + 0, b, c, n) != 0) { printf("vadd failed: %s\n", te_get_last_error()); return 1; }
  for (int32_t i = 0; i < n; ++i)
    if (c[i] != a[i] + b[i]) { printf("vadd wrong at %d\n", i); return 1; }
  if (c[n] != 42.0f) { printf("vadd wrote past the end\n"); return 1; }
  free(a); free(b); free(c);
  return 0;
}

int main(void) {
  int32_t sizes[] = {1, 3, 8, 100, 10001};
  for (int k = 0; k < 5; ++k)
    if (check_vadd(sizes[k]) != 0) return 1;
  double x[6] = {0, 1, 2, 3, 4, 5}, y[6];
  if (scale_checked(x, y, 2, 3, 1.5) != 0) { printf("scale failed\n"); return 1; }
  for (int i = 0; i < 6; ++i)
    if (y[i] != 1.5 * x[i]) { printf("scale wrong at %d\n", i); return 1; }
  x[4] = -1;
  if (scale_checked(x, y, 2, 3, 1.5) == 0) { printf("no error for a negative x\n"); return 1; }
  printf("error: %s\n", te_get_last_error());
  if (vadd(NULL, (float*)y, (float*)y, 2) == 0) { printf("no error for NULL\n"); return 1; }
  printf("null: %s\n", te_get_last_error());
  printf("threads: %d\n", te_num_threads());
  printf("ok\n");
  return 0;
}
)";

TEST(Aot, PrototypesAndHeader) {
  EXPECT_EQ(c_prototype(vadd()), "int32_t vadd(float* A, float* B, float* C, int32_t n)");
  EXPECT_EQ(c_prototype(scale_checked()),
            "int32_t scale_checked(double* x, double* y, int32_t n, int32_t m, double alpha)");
  std::string header = c_header({vadd(), scale_checked()}, "KERNELS_H_");
  EXPECT_TRUE(contains(header, "#ifndef KERNELS_H_")) << header;
  EXPECT_TRUE(contains(header, "#include <stdint.h>")) << header;
  EXPECT_TRUE(contains(header, "extern \"C\"")) << header;
  EXPECT_TRUE(contains(header, "int32_t vadd(float* A, float* B, float* C, int32_t n);")) << header;
  EXPECT_TRUE(contains(header, "const char* te_get_last_error(void);")) << header;
  // Odd names become C identifiers; float16 and bool buffers get their storage types.
  Var n("my n"), i("i"), s("int", Float(16));
  Buffer H("h-in", Float(16), {n}), M("mask", Bool(), {n});
  LoweredFunc odd = make_func("odd", {buffer_param(H), buffer_param(M), scalar_param(s)},
                              serial(i, 0, n, store(H, load(H, {i}) * s, {i})));
  EXPECT_EQ(c_prototype(odd), "int32_t odd(uint16_t* h_in, uint8_t* mask, int32_t my_n, float int_)");
}

TEST(Aot, PlainCProgramLinksTheObjectAndTheRuntime) {
  ScratchDir scratch("te_aot");
  const std::string& dir = scratch.path();
  export_object({vadd(), scale_checked()}, dir + "/kernels.o");
  export_header({vadd(), scale_checked()}, dir + "/kernels.h");
  write(dir + "/main.c", kProgram);
  std::string rt = runtime_dir();
  std::string compile = std::string("cc") + kSanitize + " -std=c99 -Wall -Wextra -Werror -I" + dir + " -I" +
                        include_dir() + " " + dir + "/main.c " + dir + "/kernels.o -L" + rt +
                        " -lte_runtime -Wl,-rpath," + rt + " -lm -o " + dir + "/prog";
  ASSERT_EQ(run(compile, dir + "/cc.log"), 0) << compile << "\n" << read(dir + "/cc.log");
  ASSERT_EQ(run("TE_NUM_THREADS=3 " + dir + "/prog", dir + "/run.log"), 0) << read(dir + "/run.log");
  std::string out = read(dir + "/run.log");
  EXPECT_TRUE(contains(out, "error: scale_checked: x must be non-negative")) << out;
  EXPECT_TRUE(contains(out, "null: vadd: argument 'A' is a null pointer")) << out;
  EXPECT_TRUE(contains(out, "threads: 3")) << out;
  EXPECT_TRUE(contains(out, "ok")) << out;
  // The object defines exactly the two kernels...
  ASSERT_EQ(run("nm -g --defined-only " + dir + "/kernels.o | awk '{print $3}' | sort", dir + "/nm_defined.log"), 0);
  EXPECT_EQ(read(dir + "/nm_defined.log"), "scale_checked\nvadd\n");
  // ...and needs nothing of te but the runtime.
  ASSERT_EQ(run("nm -u " + dir + "/kernels.o", dir + "/nm.log"), 0);
  std::string undefined = read(dir + "/nm.log");
  std::istringstream lines(undefined);
  for (std::string line; std::getline(lines, line);) {
    std::string sym = line.substr(line.find_last_of(' ') + 1);
    bool runtime = sym.rfind("te_", 0) == 0;
    EXPECT_TRUE(runtime || sym.find("te") == std::string::npos) << "unexpected dependency " << sym;
  }
}

TEST(Aot, PlainCProgramLinksTheSharedLibrary) {
  ScratchDir scratch("te_aot");
  const std::string& dir = scratch.path();
  export_library({vadd(), scale_checked()}, dir + "/libkernels.so");
  export_header({vadd(), scale_checked()}, dir + "/kernels.h");
  write(dir + "/main.c", kProgram);
  std::string rt = runtime_dir();
  std::string compile = std::string("cc") + kSanitize + " -std=c99 -I" + dir + " -I" + include_dir() + " " + dir +
                        "/main.c -L" + dir + " -lkernels -L" + rt + " -lte_runtime -Wl,-rpath," + rt + " -Wl,-rpath," +
                        dir + " -lm -o " + dir + "/prog";
  ASSERT_EQ(run(compile, dir + "/cc.log"), 0) << compile << "\n" << read(dir + "/cc.log");
  ASSERT_EQ(run(dir + "/prog", dir + "/run.log"), 0) << read(dir + "/run.log");
  EXPECT_TRUE(contains(read(dir + "/run.log"), "ok"));
}

TEST(Aot, ExportErrorsNameTheFile) {
  expect_error([] { export_object(vadd(), "/nonexistent-dir/k.o"); }, {"export_object", "/nonexistent-dir/k.o"});
  expect_error([] { export_header(vadd(), "/nonexistent-dir/k.h"); }, {"export_header", "/nonexistent-dir/k.h"});
  expect_error([] { export_library(vadd(), "/nonexistent-dir/k.so"); }, {"export_library", "/nonexistent-dir/k.so"});
}

}  // namespace
