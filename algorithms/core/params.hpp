#pragma once
// A family's parameters, declared once. One ParamTable<S> per family lists every param with its
// name, the member of the typed struct S it fills, its doc, its allowed values or range and
// whether it is backend-only; the default is the member's value in a default-constructed S (the
// struct's initialisers are the only place a default is written). The table yields
//   specs()  the ParamSpec list the family's params() returns (the runner validates configs with
//            it before anything under results/ is written: types, ranges, allowed values), and
//   read()   the typed struct from a run's params (missing keys keep the defaults), so backends
//            read ints, doubles and enums, never strings in a hot path.
//
//   struct Opts { int population = 10; Path path = Path::fast; };
//   ParamTable<Opts> t("pittsburgh");
//   t.add("population", &Opts::population, "individuals").range(1, 1 << 24);
//   t.add_enum("path", &Opts::path, {{"faithful", Path::faithful}, {"fast", Path::fast}}, "CUDA path").backend_only();
//   Opts o = t.read(ctx.params);
//
// Host-only (C++20 is not required: CUDA code may include it, it never calls it on the device).
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/error.hpp"

namespace gpudm {

// One parameter a family accepts in a config's "params" (validated by the runner: unknown keys
// are rejected with the nearest valid key suggested, values with check()).
struct ParamSpec {
  std::string name;
  std::string type;  // "int" | "number" | "string" | "bool" | "array" | "object", or "a|b" for either
  nlohmann::json default_value;
  std::string doc;
  // Chooses how a backend runs, never what it computes (threads, devices, kernel path): the
  // runner ignores it when it looks for the reference run to validate against. "threads",
  // "devices" and "path" are treated as backend-only whatever this says.
  bool backend_only = false;
  // The value must be one of these (empty: any value of the type).
  std::vector<nlohmann::json> allowed = {};
  // Inclusive bounds of an "int" or "number" (of each element of an "array" of numbers).
  std::optional<double> minimum = std::nullopt, maximum = std::nullopt;
  // "array" params: the type of every element ("int", "number", "string"; "" = any).
  std::string items = {};

  // "" when `v` is a valid value of this param, else the reason, e.g.
  // "expects an int in [1, 65535], got 0" or "expects one of \"fast\", \"faithful\", got \"fats\"".
  std::string check(const nlohmann::json& v) const;
  // What --list prints after the doc: " [1, 65535]", " (fast | faithful)", "" when unconstrained.
  std::string constraint_text() const;
};

// True when `v` has one of the types of `type` ("int|string": either).
bool param_type_ok(const std::string& type, const nlohmann::json& v);

namespace params_detail {

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

template <class T>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_integral_v<T>) return "int";
  else if constexpr (std::is_floating_point_v<T>) return "number";
  else if constexpr (std::is_same_v<T, std::string>) return "string";
  else if constexpr (is_vector<T>::value) return "array";
  else return "any";
}

// Bounds of an integer type as doubles (exact up to 2^53; wider types are clamped to that).
template <class T>
void type_bounds(ParamSpec& s) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    constexpr double kExact = 9007199254740992.0;  // 2^53
    const double lo = std::max(static_cast<double>(std::numeric_limits<T>::min()), -kExact);
    const double hi = std::min(static_cast<double>(std::numeric_limits<T>::max()), kExact);
    s.minimum = lo;
    s.maximum = hi;
  }
}

template <class T>
T convert(const nlohmann::json& v) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // check() has already bounded the value to T's range
    if (v.is_number_unsigned()) return static_cast<T>(v.template get<std::uint64_t>());
    return static_cast<T>(v.template get<long long>());
  } else {
    return v.template get<T>();
  }
}

}  // namespace params_detail

template <class S>
class ParamTable {
 public:
  explicit ParamTable(std::string family, S prototype = S{}) : family_(std::move(family)), proto_(std::move(prototype)) {}

  // Refines the entry just added.
  class Entry {
   public:
    Entry(ParamTable* t, std::size_t i) : t_(t), i_(i) {}
    Entry& range(double lo, double hi) {
      spec().minimum = lo;
      spec().maximum = hi;
      return *this;
    }
    Entry& at_least(double lo) {
      spec().minimum = lo;
      return *this;
    }
    Entry& one_of(std::vector<nlohmann::json> values) {
      spec().allowed = std::move(values);
      return *this;
    }
    Entry& backend_only() {
      spec().backend_only = true;
      return *this;
    }

   private:
    ParamSpec& spec() { return t_->entries_[i_].spec; }
    ParamTable* t_;
    std::size_t i_;
  };

  // A member of S (int, double, bool, std::string, std::vector<number>).
  template <class T>
  Entry add(std::string name, T S::*member, std::string doc) {
    return add<T>(std::move(name), [member](S& s) -> T& { return s.*member; }, std::move(doc));
  }
  // A field reached through `get` (nested structs): [](S& s) -> T& { return s.fitness.alpha; }.
  template <class T, class Get>
  Entry add(std::string name, Get get, std::string doc) {
    using U = std::decay_t<T>;
    ParamSpec s;
    s.name = std::move(name);
    s.type = params_detail::type_name<U>();
    s.doc = std::move(doc);
    params_detail::type_bounds<U>(s);
    if constexpr (params_detail::is_vector<U>::value) {
      using E = typename U::value_type;
      params_detail::type_bounds<E>(s);
      s.items = params_detail::type_name<E>();
    }
    S proto = proto_;
    s.default_value = get(proto);
    Item item;
    item.spec = std::move(s);
    item.set = [get](S& obj, const nlohmann::json& v) {
      if constexpr (params_detail::is_vector<U>::value) {
        using E = typename U::value_type;
        U out;
        for (const auto& e : v) out.push_back(params_detail::convert<E>(e));
        get(obj) = std::move(out);
      } else {
        get(obj) = params_detail::convert<U>(v);
      }
    };
    entries_.push_back(std::move(item));
    return Entry(this, entries_.size() - 1);
  }

  // An enum member written as one of `names` in configs.
  template <class E>
  Entry add_enum(std::string name, E S::*member, std::vector<std::pair<std::string, E>> names, std::string doc) {
    return add_enum<E>(std::move(name), [member](S& s) -> E& { return s.*member; }, std::move(names), std::move(doc));
  }
  template <class E, class Get>
  Entry add_enum(std::string name, Get get, std::vector<std::pair<std::string, E>> names, std::string doc) {
    ParamSpec s;
    s.name = std::move(name);
    s.type = "string";
    s.doc = std::move(doc);
    S proto = proto_;
    const E def = get(proto);
    bool found = false;
    for (const auto& [n, e] : names) {
      s.allowed.push_back(n);
      if (e == def && !found) {
        s.default_value = n;
        found = true;
      }
    }
    if (!found) throw Error(family_ + ": param '" + s.name + "': the default is not one of its names");
    Item item;
    item.spec = std::move(s);
    item.set = [get, names](S& obj, const nlohmann::json& v) {
      const std::string str = v.template get<std::string>();
      for (const auto& [n, e] : names)
        if (n == str) {
          get(obj) = e;
          return;
        }
    };
    entries_.push_back(std::move(item));
    return Entry(this, entries_.size() - 1);
  }

  // A raw JSON value of the given type ("array", "object", "int|string", ...), stored as is.
  Entry add_json(std::string name, nlohmann::json S::*member, std::string type, std::string doc) {
    ParamSpec s;
    s.name = std::move(name);
    s.type = std::move(type);
    s.doc = std::move(doc);
    s.default_value = proto_.*member;
    Item item;
    item.spec = std::move(s);
    item.set = [member](S& obj, const nlohmann::json& v) { obj.*member = v; };
    entries_.push_back(std::move(item));
    return Entry(this, entries_.size() - 1);
  }

  std::vector<ParamSpec> specs() const {
    std::vector<ParamSpec> out;
    out.reserve(entries_.size());
    for (const auto& e : entries_) out.push_back(e.spec);
    return out;
  }

  // The typed struct from a run's params: missing or null keys keep the default; every present
  // value is checked (the runner has checked configs already; this guards direct callers such
  // as the CLI modes and tests). Unknown keys are an error.
  S read(const nlohmann::json& params) const {
    S out = proto_;
    if (params.is_null()) return out;
    if (!params.is_object()) throw Error(family_ + ": params must be an object, got " + params.dump());
    for (auto it = params.begin(); it != params.end(); ++it) {
      const Item* item = find(it.key());
      if (!item) throw Error(family_ + ": unknown param '" + it.key() + "'");
      if (it.value().is_null()) continue;
      if (const std::string why = item->spec.check(it.value()); !why.empty())
        throw Error(family_ + ": params." + it.key() + ": " + why);
      item->set(out, it.value());
    }
    return out;
  }

  const std::string& family() const { return family_; }
  const S& defaults() const { return proto_; }

 private:
  struct Item {
    ParamSpec spec;
    std::function<void(S&, const nlohmann::json&)> set;
  };
  const Item* find(const std::string& name) const {
    for (const auto& e : entries_)
      if (e.spec.name == name) return &e;
    return nullptr;
  }
  std::string family_;
  S proto_;
  std::vector<Item> entries_;
};

}  // namespace gpudm
