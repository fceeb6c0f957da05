/// \file
/// MPI scale-out of the tuner (optional: the te_autotune_mpi library, built when CMake
/// finds MPI; Debian: libopenmpi-dev). One rank tunes, the others measure: rank 0 runs the
/// tuner and sends each config's index to an idle rank; every other rank measures it with
/// its own LocalMeasurer (forked workers, so a crashing config takes down a worker, never
/// the rank) and sends the result back as a JSON line. Ranks on one machine measure at
/// the same time and disturb each other's timings: spread them over machines (one rank
/// per machine plus the tuner) for numbers worth comparing.
///
///   int main(int argc, char** argv) {
///     MPI_Init(&argc, &argv);
///     ... make the task and a tuner, the same on every rank ...
///     TuneResult r = te::autotune::mpi::tune(task, tuner, options);  // r is rank 0's
///     MPI_Finalize();
///   }
///   mpirun -np 5 ./my_tuner
#pragma once
#include "te/autotune/tune.h"

namespace te::autotune::mpi {

/// Call on every rank of MPI_COMM_WORLD after MPI_Init. Rank 0 tunes (records and progress
/// are its alone) and returns the result; the other ranks serve trials until rank 0 is
/// done and return an empty result. With a single rank, rank 0 measures locally.
TuneResult tune(const Task& task, Tuner& tuner, const TuneOptions& options);

/// This process's rank in MPI_COMM_WORLD and the number of ranks.
int rank();
/// The number of ranks in MPI_COMM_WORLD.
int size();

/// Rank 0's side: sends configs to ranks 1..size-1 and gathers their results.
class MpiMeasurer : public Measurer {
 public:
  /// A measurer over every rank but 0.
  MpiMeasurer();
  /// Sends the configs to the worker ranks and gathers their results, in order.
  std::vector<MeasureResult> measure(const std::vector<Config>& configs) override;
  size_t parallelism() const override { return workers_; }
  /// Tells every worker rank to return from tune().
  void stop();

 private:
  size_t workers_;
  bool stopped_ = false;
};

/// A worker rank's side: measures the configs rank 0 sends until it says stop.
void serve(const Task& task, const MeasureOptions& options);

}  // namespace te::autotune::mpi
