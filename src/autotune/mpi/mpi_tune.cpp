// te_autotune_mpi: rank 0 tunes, the other ranks measure (see te/autotune/mpi.h).
// The C API only: OpenMPI's C++ bindings do not compile warning-free.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "te/autotune/mpi.h"
#include "te/error.h"

namespace te::autotune::mpi {

namespace {
constexpr int kTagConfig = 1;  // rank 0 -> worker: a config's index (uint64)
constexpr int kTagResult = 2;  // worker -> rank 0: a result (JSON text)
constexpr int kTagStop = 3;    // rank 0 -> worker: return from tune()
}  // namespace

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

MpiMeasurer::MpiMeasurer() : workers_(size_t(size() > 1 ? size() - 1 : 0)) {
  if (rank() != 0) throw Error("MpiMeasurer: only rank 0 tunes");
  if (workers_ == 0) throw Error("MpiMeasurer: there is no other rank to measure on");
}

std::vector<MeasureResult> MpiMeasurer::measure(const std::vector<Config>& configs) {
  std::vector<MeasureResult> results(configs.size());
  std::deque<int> idle;
  for (int r = 1; r <= int(workers_); ++r) idle.push_back(r);
  std::vector<size_t> assigned(workers_ + 1, 0);
  size_t next = 0, outstanding = 0;
  while (next < configs.size() || outstanding > 0) {
    while (!idle.empty() && next < configs.size()) {
      int r = idle.front();
      idle.pop_front();
      uint64_t index = configs[next].index();
      MPI_Send(&index, 1, MPI_UINT64_T, r, kTagConfig, MPI_COMM_WORLD);
      assigned[size_t(r)] = next++;
      ++outstanding;
    }
    MPI_Status st;
    MPI_Probe(MPI_ANY_SOURCE, kTagResult, MPI_COMM_WORLD, &st);
    int count = 0;
    MPI_Get_count(&st, MPI_CHAR, &count);
    std::string text(size_t(count > 0 ? count : 0), '\0');
    MPI_Recv(text.data(), count, MPI_CHAR, st.MPI_SOURCE, kTagResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    results[assigned[size_t(st.MPI_SOURCE)]] = parse_result(text);
    idle.push_back(st.MPI_SOURCE);
    --outstanding;
  }
  return results;
}

void MpiMeasurer::stop() {
  if (stopped_) return;
  stopped_ = true;
  for (int r = 1; r <= int(workers_); ++r) MPI_Send(nullptr, 0, MPI_CHAR, r, kTagStop, MPI_COMM_WORLD);
}

void serve(const Task& task, const MeasureOptions& options) {
  LocalMeasurer local(task, options);
  for (;;) {
    MPI_Status st;
    MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    if (st.MPI_TAG == kTagStop) {
      MPI_Recv(nullptr, 0, MPI_CHAR, 0, kTagStop, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      return;
    }
    uint64_t index = 0;
    MPI_Recv(&index, 1, MPI_UINT64_T, 0, kTagConfig, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MeasureResult r;
    try {
      r = local.measure({task.space.at(index)}).at(0);
    } catch (const std::exception& e) {
      // A setup failure (the reference, make_args) fails every trial of this rank.
      r = MeasureResult();
      r.error = e.what();
    }
    std::string text = format_result(r);
    MPI_Send(text.data(), int(text.size()), MPI_CHAR, 0, kTagResult, MPI_COMM_WORLD);
  }
}

TuneResult tune(const Task& task, Tuner& tuner, const TuneOptions& options) {
  if (size() == 1) return te::autotune::tune(task, tuner, options);
  if (rank() != 0) {
    serve(task, options.measure);
    return {};
  }
  MpiMeasurer measurer;
  try {
    TuneResult r = te::autotune::tune(task, tuner, measurer, options);
    measurer.stop();
    return r;
  } catch (...) {
    measurer.stop();  // the workers must not wait for ever
    throw;
  }
}

}  // namespace te::autotune::mpi
