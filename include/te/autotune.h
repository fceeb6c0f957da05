/// \file
/// Auto-tuning of schedule parameters (as TVM's autotvm): a ConfigSpace of knobs, a
/// schedule callback reading a Config, tuners (grid, random, model-guided annealing),
/// measurement in worker processes, JSON-lines tuning records and apply_best.
///
///   autotune::Task task;
///   task.key = "sgemm/1024";
///   task.space.define_pow2("nc", 32, 1024);
///   task.build = [&](const autotune::Config& c) { return lower(my_schedule(c["nc"]), ...); };
///   task.reference = [&] { return lower(default_schedule(), ...); };
///   task.make_args = [&] { return std::vector<Argument>{A, B, C}; };
///   autotune::ModelTuner tuner(task.space);
///   autotune::TuneOptions opt;
///   opt.n_trial = 64;
///   opt.records_path = "sgemm.jsonl";
///   autotune::tune(task, tuner, opt);
///   Module m = build(autotune::apply_best("sgemm.jsonl", task));
///
/// MPI scale-out (optional, te::autotune_mpi): te/autotune/mpi.h.
#pragma once
#include "te/autotune/measure.h"
#include "te/autotune/records.h"
#include "te/autotune/space.h"
#include "te/autotune/tune.h"
#include "te/autotune/tuner.h"
