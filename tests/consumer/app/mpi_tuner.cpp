// Links te::autotune_mpi from an outside project: the smallest program that calls into it.
// (Run under mpirun it would print the rank; the consumer test only builds it.)
#include <mpi.h>
#include <te/autotune/mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::printf("rank %d of %d\n", te::autotune::mpi::rank(), te::autotune::mpi::size());
  MPI_Finalize();
  return 0;
}
