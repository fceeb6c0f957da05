#include "te/interpret.h"

#include <fmt/format.h>

#include "interpret/interpreter.h"

namespace te {

void interpret(const LoweredFunc& f, const std::vector<Argument>& args) {
  try {
    interp::Interpreter(f).run(args);
  } catch (const InternalError&) {
    throw;
  } catch (const Error& e) {
    throw Error(fmt::format("interpret '{}': {}", f.name, e.what()));
  }
}

}  // namespace te
