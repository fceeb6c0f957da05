#include "te/autotune/space.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "te/error.h"

namespace te::autotune {

namespace {
// Every knob of a space stays small enough to enumerate, and a space's size fits in 62 bits.
constexpr size_t kMaxOptions = size_t(1) << 20;
constexpr uint64_t kMaxSpace = uint64_t(1) << 62;
constexpr size_t kMaxKnobs = 64;

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
  return true;
}
}  // namespace

std::string Knob::label(size_t i) const {
  if (kind == KnobKind::Choice) return labels.at(i);
  if (kind == KnobKind::Bool) return values.at(i) ? "on" : "off";
  return std::to_string(values.at(i));
}

const std::vector<Knob>& Config::knobs() const {
  static const std::vector<Knob> none;
  return knobs_ ? *knobs_ : none;
}

const Knob& Config::knob(const std::string& name, size_t* pos) const {
  const auto& ks = knobs();
  for (size_t i = 0; i < ks.size(); ++i)
    if (ks[i].name == name) {
      *pos = i;
      return ks[i];
    }
  std::string names;
  for (const Knob& k : ks) names += (names.empty() ? "" : ", ") + k.name;
  throw Error(fmt::format("Config: no knob '{}' (the space has: {})", name, names.empty() ? "none" : names));
}

int64_t Config::get(const std::string& name) const {
  size_t pos = 0;
  const Knob& k = knob(name, &pos);
  return k.values[indices_[pos]];
}

const std::string& Config::choice(const std::string& name) const {
  size_t pos = 0;
  const Knob& k = knob(name, &pos);
  if (k.kind != KnobKind::Choice) throw Error(fmt::format("Config::choice: knob '{}' is not a choice", name));
  return k.labels[indices_[pos]];
}

std::string Config::to_string() const {
  std::string s;
  const auto& ks = knobs();
  for (size_t i = 0; i < ks.size(); ++i) s += (i ? " " : "") + ks[i].name + "=" + ks[i].label(indices_[i]);
  return s;
}

ConfigSpace::ConfigSpace() : knobs_(std::make_shared<const std::vector<Knob>>()) {}

void ConfigSpace::add(Knob k) {
  if (!valid_name(k.name))
    throw Error(fmt::format("ConfigSpace: knob name '{}' must be 1-64 letters, digits, '_', '.' or '-'", k.name));
  for (const Knob& o : *knobs_)
    if (o.name == k.name) throw Error(fmt::format("ConfigSpace: knob '{}' is defined twice", k.name));
  if (knobs_->size() >= kMaxKnobs) throw Error(fmt::format("ConfigSpace: more than {} knobs", kMaxKnobs));
  if (k.values.empty()) throw Error(fmt::format("ConfigSpace: knob '{}' has no options", k.name));
  if (k.values.size() > kMaxOptions)
    throw Error(
        fmt::format("ConfigSpace: knob '{}' has {} options (at most {})", k.name, k.values.size(), kMaxOptions));
  if (size_ > kMaxSpace / k.values.size())
    throw Error(fmt::format("ConfigSpace: knob '{}' makes the space larger than 2^62 configs", k.name));
  size_ *= k.values.size();
  auto next = std::make_shared<std::vector<Knob>>(*knobs_);
  next->push_back(std::move(k));
  knobs_ = std::move(next);  // configs already taken keep the knobs they were made with
}

void ConfigSpace::define_split(const std::string& name, int64_t extent, int64_t max_factor) {
  if (extent < 1) throw Error(fmt::format("ConfigSpace::define_split '{}': extent {} must be >= 1", name, extent));
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d <= extent / d; ++d) {
    if (extent % d) continue;
    small.push_back(d);
    if (d != extent / d) large.push_back(extent / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  if (max_factor > 0) small.erase(std::upper_bound(small.begin(), small.end(), max_factor), small.end());
  add({name, KnobKind::Split, small, {}});
}

void ConfigSpace::define_pow2(const std::string& name, int64_t lo, int64_t hi) {
  if (lo < 1 || hi < lo)
    throw Error(fmt::format("ConfigSpace::define_pow2 '{}': need 1 <= lo <= hi (got {}, {})", name, lo, hi));
  std::vector<int64_t> v;
  for (int64_t p = 1; p <= hi; p *= 2) {
    if (p >= lo) v.push_back(p);
    if (p > hi / 2) break;
  }
  if (v.empty()) throw Error(fmt::format("ConfigSpace::define_pow2 '{}': no power of two in [{}, {}]", name, lo, hi));
  add({name, KnobKind::Pow2, v, {}});
}

void ConfigSpace::define_range(const std::string& name, int64_t lo, int64_t hi, int64_t step) {
  if (step < 1 || hi < lo)
    throw Error(fmt::format("ConfigSpace::define_range '{}': need lo <= hi and step >= 1 (got {}, {}, {})", name, lo,
                            hi, step));
  uint64_t count = (static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo)) / static_cast<uint64_t>(step) + 1;
  if (count > kMaxOptions)
    throw Error(fmt::format("ConfigSpace::define_range '{}': {} options (at most {})", name, count, kMaxOptions));
  std::vector<int64_t> v;
  for (uint64_t i = 0; i < count; ++i) v.push_back(lo + static_cast<int64_t>(i) * step);
  add({name, KnobKind::Range, v, {}});
}

void ConfigSpace::define_values(const std::string& name, std::vector<int64_t> values) {
  std::set<int64_t> seen(values.begin(), values.end());
  if (seen.size() != values.size())
    throw Error(fmt::format("ConfigSpace::define_values '{}': the values must be distinct", name));
  add({name, KnobKind::Values, std::move(values), {}});
}

void ConfigSpace::define_choice(const std::string& name, std::vector<std::string> options) {
  std::set<std::string> seen(options.begin(), options.end());
  if (seen.size() != options.size())
    throw Error(fmt::format("ConfigSpace::define_choice '{}': the options must be distinct", name));
  for (const std::string& o : options)
    if (o.empty() || o.size() > 256)
      throw Error(fmt::format("ConfigSpace::define_choice '{}': option names must have 1-256 characters", name));
  std::vector<int64_t> v;
  for (size_t i = 0; i < options.size(); ++i) v.push_back(static_cast<int64_t>(i));
  add({name, KnobKind::Choice, v, std::move(options)});
}

void ConfigSpace::define_bool(const std::string& name) { add({name, KnobKind::Bool, {0, 1}, {}}); }

Config ConfigSpace::at(uint64_t index) const {
  if (index >= size_)
    throw Error(fmt::format("ConfigSpace::at: index {} is outside the space of {} configs", index, size_));
  Config c;
  c.knobs_ = knobs_;
  c.index_ = index;
  for (const Knob& k : *knobs_) {
    c.indices_.push_back(static_cast<size_t>(index % k.size()));
    index /= k.size();
  }
  return c;
}

Config ConfigSpace::from_indices(const std::vector<size_t>& indices) const {
  const auto& ks = *knobs_;
  if (indices.size() != ks.size())
    throw Error(fmt::format("ConfigSpace::from_indices: {} indices for {} knobs", indices.size(), ks.size()));
  uint64_t index = 0, radix = 1;
  for (size_t i = 0; i < ks.size(); ++i) {
    if (indices[i] >= ks[i].size())
      throw Error(fmt::format("ConfigSpace::from_indices: option {} of knob '{}' (it has {})", indices[i], ks[i].name,
                              ks[i].size()));
    index += indices[i] * radix;
    radix *= ks[i].size();
  }
  Config c;
  c.knobs_ = knobs_;
  c.indices_ = indices;
  c.index_ = index;
  return c;
}

std::optional<Config> ConfigSpace::from_labels(const std::vector<std::pair<std::string, std::string>>& labels) const {
  const auto& ks = *knobs_;
  if (labels.size() != ks.size()) return std::nullopt;
  std::vector<size_t> indices(ks.size());
  for (size_t i = 0; i < ks.size(); ++i) {
    const std::string* label = nullptr;
    for (const auto& [n, l] : labels)
      if (n == ks[i].name) label = &l;
    if (!label) return std::nullopt;
    bool found = false;
    for (size_t o = 0; o < ks[i].size() && !found; ++o)
      if (ks[i].label(o) == *label) {
        indices[i] = o;
        found = true;
      }
    if (!found) return std::nullopt;
  }
  return from_indices(indices);
}

}  // namespace te::autotune
