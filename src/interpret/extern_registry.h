// The host functions interpret() calls for call_extern (te::register_extern).
#pragma once
#include <memory>
#include <string>

#include "te/interpret.h"

namespace te::interp {

// name's host function, or null. The interpreter holds the pointer for its run, so a
// function replaced or removed meanwhile stays alive until the run ends.
std::shared_ptr<const HostFunction> find_host_function(const std::string& name);

}  // namespace te::interp
