// The measured search of auto_schedule (trials > 0).
#pragma once
#include <vector>

#include "auto_schedule/rules.h"
#include "te/autotune/measure.h"

namespace te::auto_sched {

// The tuning task of the rules' space: its key (the computation, target and options), the
// rules replayed with a config, the default schedule as reference, random inputs. Needs
// constant shapes (te::Error naming the tensor otherwise).
autotune::Task search_task(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options,
                           const autotune::ConfigSpace& space);

// Searches, measures and returns the best schedule found (the rules' when nothing beats
// them or there is nothing to choose).
Schedule search(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options);

// The best config options.records holds for this graph (the key search() records under),
// replayed without measuring; the rules' schedule when the file holds none of it.
Schedule best_recorded(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options);

}  // namespace te::auto_sched
