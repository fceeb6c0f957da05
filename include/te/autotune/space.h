/// \file
/// The search space of a tuning task: knobs the user defines (split factors, powers of
/// two, integer ranges, a choice among named options, on/off switches) and the Configs,
/// one option per knob, that the schedule callback reads.
///
///   ConfigSpace space;
///   space.define_split("tile_i", 1024, 64);        // the divisors of 1024 up to 64
///   space.define_choice("order", {"ijk", "ikj"});
///   space.define_bool("vectorize");
///   Config c = space.at(17);
///   int64_t ti = c["tile_i"];  bool vec = c.flag("vectorize");  c.choice("order")
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "te/export.h"

namespace te::autotune {

/// How a knob's options were defined (see ConfigSpace::define_*).
enum class KnobKind {
  Split,   ///< divisors of an extent
  Pow2,    ///< powers of two
  Range,   ///< an arithmetic range
  Values,  ///< given values
  Choice,  ///< named options
  Bool     ///< off / on
};

/// One tunable parameter of a ConfigSpace and its options.
struct TE_API Knob {
  std::string name;                  ///< Its name in configs and records.
  KnobKind kind = KnobKind::Values;  ///< How it was defined.
  /// The value each option gives: ascending for Split, Pow2 and Range; the option's
  /// position for Choice; 0 and 1 for Bool.
  std::vector<int64_t> values;
  std::vector<std::string> labels;  ///< Choice: the option names
  /// The number of options.
  size_t size() const { return values.size(); }
  /// Ordered knobs' options lie on a line (a neighbour is a step away); Choice options do not.
  bool ordered() const { return kind != KnobKind::Choice; }
  /// How option i is written in records and printed: "32", "ikj", "on".
  std::string label(size_t i) const;
};

class ConfigSpace;  ///< See below.

/// One point of a space: an option of each knob. Cheap to copy.
class TE_API Config {
 public:
  Config() = default;
  /// The value of a knob (te::Error naming the knob and the ones there are if unknown).
  int64_t get(const std::string& knob) const;
  /// The same as get().
  int64_t operator[](const std::string& knob) const { return get(knob); }
  /// A Bool knob's value as a bool.
  bool flag(const std::string& knob) const { return get(knob) != 0; }
  /// The chosen option of a Choice knob.
  const std::string& choice(const std::string& knob) const;

  /// The option of each knob, in the order the knobs were defined.
  const std::vector<size_t>& indices() const { return indices_; }
  /// The position of this config in its space (mixed radix, the first knob fastest).
  uint64_t index() const { return index_; }
  /// The knobs of its space.
  const std::vector<Knob>& knobs() const;
  /// Whether it belongs to a space (default-constructed configs do not).
  bool defined() const { return knobs_ != nullptr; }
  /// "tile_i=32 order=ikj vectorize=on"
  std::string to_string() const;

 private:
  friend class ConfigSpace;
  std::shared_ptr<const std::vector<Knob>> knobs_;
  std::vector<size_t> indices_;
  uint64_t index_ = 0;
  const Knob& knob(const std::string& name, size_t* pos) const;
};

/// The knobs of a tunable schedule and every combination of their options (AutoTVM's
/// ConfigSpace): define the knobs, then enumerate or sample Configs.
class TE_API ConfigSpace {
 public:
  /// A space without knobs (one config).
  ConfigSpace();
  /// Split factors: the divisors of extent (at most max_factor when > 0), ascending.
  void define_split(const std::string& name, int64_t extent, int64_t max_factor = 0);
  /// The powers of two from lo to hi (lo >= 1).
  void define_pow2(const std::string& name, int64_t lo, int64_t hi);
  /// lo, lo + step, ... up to hi.
  void define_range(const std::string& name, int64_t lo, int64_t hi, int64_t step = 1);
  /// Given values, kept in the order given (distinct).
  void define_values(const std::string& name, std::vector<int64_t> values);
  /// Named options; Config::choice gives the name, get() its position.
  void define_choice(const std::string& name, std::vector<std::string> options);
  /// Off (0) or on (1).
  void define_bool(const std::string& name);

  /// The knobs, in the order they were defined.
  const std::vector<Knob>& knobs() const { return *knobs_; }
  /// The number of configs (te::Error is thrown when a definition would pass 2^62).
  uint64_t size() const { return size_; }
  /// The config at position index < size(); every knob at its first option is index 0.
  Config at(uint64_t index) const;
  /// The config with the given option of each knob (te::Error when out of range).
  Config from_indices(const std::vector<size_t>& indices) const;
  /// The config whose knobs have the given labels (as Knob::label writes them); nullopt
  /// when a knob is missing or extra, or a label is not one of its options.
  std::optional<Config> from_labels(const std::vector<std::pair<std::string, std::string>>& labels) const;

 private:
  void add(Knob k);
  std::shared_ptr<const std::vector<Knob>> knobs_;
  uint64_t size_ = 1;
};

}  // namespace te::autotune
