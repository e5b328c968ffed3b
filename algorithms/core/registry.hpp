#pragma once
// Registry of backends per family. Backends are registered explicitly by
// backends/register.cpp (no static self-registration). A backend that is not compiled or
// cannot run here is registered as unavailable with a reason, so the runner reports it as
// "skipped" instead of crashing.
#include <any>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "algorithms/core/backend.hpp"
#include "algorithms/core/error.hpp"

namespace gpudm {

struct BackendInfo {
  std::string family;
  std::string backend;
  bool available = false;
  std::string reason;  // why unavailable; empty when available
  bool reference = false;  // the family's oracle: every other backend is validated against it
};

class Registry {
 public:
  template <class Interface>
  using Factory = std::function<std::unique_ptr<Interface>()>;

  enum class Role { other, reference };

  // Registers an available backend `backend` of family `family` implementing Interface; one
  // backend per family is registered as the reference (the oracle the others are validated against).
  template <class Interface>
  void add(const std::string& family, const std::string& backend, Factory<Interface> factory, Role role = Role::other) {
    Entry& e = entries_[{family, backend}];
    e.info = BackendInfo{family, backend, true, "", role == Role::reference};
    e.capabilities = nullptr;
    if constexpr (std::is_base_of_v<Backend, Interface>)
      e.capabilities = [factory] { return factory()->capabilities(); };
    e.factory = std::move(factory);
    remember_order(family, backend);
  }

  // Registers a backend that exists in the design but cannot run in this build/machine.
  void add_unavailable(const std::string& family, const std::string& backend, const std::string& reason) {
    Entry& e = entries_[{family, backend}];
    e.info = BackendInfo{family, backend, false, reason};
    e.factory.reset();
    e.capabilities = nullptr;
    remember_order(family, backend);
  }

  bool has(const std::string& family, const std::string& backend) const {
    return entries_.count({family, backend}) != 0;
  }
  const BackendInfo& info(const std::string& family, const std::string& backend) const {
    auto it = entries_.find({family, backend});
    if (it == entries_.end()) throw Error("no backend '" + backend + "' for family '" + family + "'" + known(family));
    return it->second.info;
  }

  // Creates an instance; throws Unavailable with the reason for an unavailable backend.
  template <class Interface>
  std::unique_ptr<Interface> create(const std::string& family, const std::string& backend) const {
    auto it = entries_.find({family, backend});
    if (it == entries_.end()) throw Error("no backend '" + backend + "' for family '" + family + "'" + known(family));
    if (!it->second.info.available) throw Unavailable(family + "/" + backend + ": " + it->second.info.reason);
    const auto* f = std::any_cast<Factory<Interface>>(&it->second.factory);
    if (!f) throw Error("backend '" + family + "/" + backend + "' does not implement the requested interface");
    return (*f)();
  }

  // Backends of a family in registration order (sequential, openmp, cuda, ...).
  std::vector<BackendInfo> backends(const std::string& family) const {
    std::vector<BackendInfo> out;
    auto it = order_.find(family);
    if (it == order_.end()) return out;
    for (const auto& b : it->second) out.push_back(entries_.at({family, b}).info);
    return out;
  }
  // The reference backend of a family; throws when none is registered.
  std::string reference(const std::string& family) const {
    auto it = order_.find(family);
    if (it != order_.end())
      for (const auto& b : it->second)
        if (entries_.at({family, b}).info.reference) return b;
    throw Error("family '" + family + "' has no reference backend registered");
  }
  bool is_reference(const std::string& family, const std::string& backend) const {
    auto it = entries_.find({family, backend});
    return it != entries_.end() && it->second.info.reference;
  }

  // What an available backend can do, asked from a fresh instance; nullopt when the backend is
  // unknown or unavailable, its interface is no Backend, or it cannot be created here.
  std::optional<Capabilities> capabilities(const std::string& family, const std::string& backend) const {
    auto it = entries_.find({family, backend});
    if (it == entries_.end() || !it->second.info.available || !it->second.capabilities) return std::nullopt;
    try {
      return it->second.capabilities();
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  // The first available backend of `family`, in registration order, whose capabilities satisfy
  // `wanted` (e.g. a host thread pool for a command-line default); the reference when none does.
  // Instantiates the candidates it asks, so call it once per decision, not in a loop.
  template <class Wanted>
  std::string first_available(const std::string& family, const Wanted& wanted) const {
    for (const auto& b : backends(family))
      if (const auto caps = capabilities(family, b.backend); caps && wanted(*caps)) return b.backend;
    return reference(family);
  }

  std::vector<std::string> families() const {
    std::vector<std::string> out;
    for (const auto& [f, _] : order_) out.push_back(f);
    return out;
  }

 private:
  struct Entry {
    BackendInfo info;
    std::any factory;
    std::function<Capabilities()> capabilities;  // set for interfaces derived from Backend
  };
  void remember_order(const std::string& family, const std::string& backend) {
    auto& v = order_[family];
    for (const auto& b : v)
      if (b == backend) return;
    v.push_back(backend);
  }
  std::string known(const std::string& family) const {
    auto it = order_.find(family);
    if (it == order_.end()) return " (unknown family)";
    std::string s = " (known:";
    for (const auto& b : it->second) s += " " + b;
    return s + ")";
  }
  std::map<std::pair<std::string, std::string>, Entry> entries_;
  std::map<std::string, std::vector<std::string>> order_;
};

}  // namespace gpudm
