// sgemm, C = A x B in float32, with te's fastest CPU schedule (examples/matmul_schedule.h).
//
//   matmul [size] [--ir]     size: M = N = K (default 1024); --ir prints the lowered loops
//
// Why the schedule is fast (sgemm_best in matmul_schedule.h):
//  1. Register tiling. C.tile, C padded up to whole mr x nr tiles, is computed per tile in
//     "local" memory with k outermost, the rows unrolled and the columns vectorized. Every
//     index of the tile is then a constant and no guard splits the k loop, so LLVM keeps
//     the tile in registers: each k step is mr broadcasts of A, nr / lanes loads of B and
//     mr * nr / lanes FMAs (AVX-512: 8 x 32, 16 independent FMA chains, enough to hide the
//     FMA latency on both FMA pipes). Padding, rather than cache_write(C, "local"), is what
//     keeps the guards out when mr or nr does not divide the sizes.
//  2. Packing. B is copied into panels PB[N / nr][K][nr]: each k step reads one contiguous
//     piece of it, instead of rows 4 KiB apart that alias in L1 and the TLB. A is read in
//     place (its mr rows stay in L1), or packed into zero-padded row tiles when mr does not
//     divide M.
//  3. Cache blocking. Columns run in blocks of nc (K x nc floats of packed B: 512 KiB, half
//     of L2); a block packs its own panels (PB computed at the block loop) right before all
//     row tiles of A pass over them, while they are still in L2. A row tile (mr x K floats)
//     stays in L1 while it meets the block's panels.
//  4. Threads. The column blocks are the parallel loop: each thread packs and reads its own
//     panels, in its own core's L2.
// The naive schedule (i, j, k as written, B read down a column) runs at 0.3-1.6 GFLOP/s;
// this one within a few per cent of OpenBLAS (bench/README.md has the measured table).
#include <te/runtime/c_runtime_api.h>
#include <te/te.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <vector>

#include "matmul_schedule.h"

int main(int argc, char** argv) {
  int size = 1024;
  bool print_ir = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--ir") == 0)
      print_ir = true;
    else
      size = std::atoi(argv[i]);
  }
  if (size <= 0) {
    std::cerr << "usage: matmul [size > 0] [--ir]\n";
    return 2;
  }
  const int M = size, N = size, K = size;

  te_examples::SgemmParams p = te_examples::sgemm_params_for_host();
  te_examples::Sgemm g = te_examples::sgemm_best(M, N, K, p);
  te::LoweredFunc f = te::lower(g.schedule, {g.A, g.B, g.C}, "sgemm");
  if (print_ir) std::cout << f << "\n";
  te::Module m = te::build(f);

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(M) * K), b(static_cast<size_t>(K) * N);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  te::NDArray A = te::NDArray::from_vector(a, {M, K});
  te::NDArray B = te::NDArray::from_vector(b, {K, N});
  te::NDArray C = te::NDArray::empty({M, N}, te::Float(32));
  m("sgemm")(A, B, C);

  // Check a sample of entries against a double-precision dot product.
  std::vector<float> c = C.to_vector<float>();
  double worst = 0;
  for (int i = 0; i < M; i += std::max(1, M / 61))
    for (int j = 0; j < N; j += std::max(1, N / 53)) {
      double ref = 0;
      for (int k = 0; k < K; ++k) ref += double(a[size_t(i) * K + k]) * b[size_t(k) * N + j];
      worst = std::max(worst, std::abs(ref - c[size_t(i) * N + j]) / (1.0 + std::abs(ref)));
    }
  if (worst > 1e-4) {
    std::cerr << "matmul: wrong result (relative error " << worst << ")\n";
    return 1;
  }

  te::TimingResult t = te::time_evaluator(m("sgemm"), 1, 10, 100)(A, B, C);
  double gflops = 2.0 * M * N * K / t.min() * 1e-9;
  std::printf("sgemm %dx%dx%d on %s (%d-float vectors, register tile %dx%d, %d thread(s)):\n", M, N, K,
              te::host_cpu().c_str(), p.lanes, p.mr, p.nr, te_num_threads());
  std::printf("  %.3f ms per call (best of 10), %.1f GFLOP/s; max relative error %.1e\n", t.min() * 1e3, gflops, worst);
  return 0;
}
