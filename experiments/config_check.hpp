#pragma once
// The config checker: every validation error of a config is "file: json.path: message"
// (docs/config-format.md), unknown keys name the nearest valid one. Shared by the loader
// (config.cpp), the sweep reader (config_sweep.cpp) and the table checks (config_tables.cpp).
#include <climits>
#include <string>
#include <vector>

#include "experiments/config.hpp"

namespace gpudm::experiments::config_detail {

// "int", "string", "object", ... as the messages name JSON types.
std::string type_name(const ojson& v);
// A value as quoted in a message, cut to 40 characters.
std::string shown(const ojson& v);
std::string join_path(const std::string& base, const std::string& key);
std::string index_path(const std::string& base, std::size_t i);

class Checker {
 public:
  explicit Checker(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& msg) const;
  // Every key of `obj` is one of `allowed`.
  void keys(const ojson& obj, const std::vector<std::string>& allowed, const std::string& path) const;
  void expect(const ojson& v, ojson::value_t t, const std::string& path) const;
  std::string string(const ojson& v, const std::string& path) const;
  void object(const ojson& v, const std::string& path) const;
  void array(const ojson& v, const std::string& path, bool non_empty = true) const;
  // An int in [min, max]; anything else (a float, a value beyond 64 bits) names the key.
  long long integer(const ojson& v, const std::string& path, long long min, long long max = LLONG_MAX) const;
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

}  // namespace gpudm::experiments::config_detail
