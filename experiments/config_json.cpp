// Config text -> JSON: errors as file:line:column, duplicate keys rejected.
#include <set>

#include "algorithms/core/json_limits.hpp"
#include "experiments/config.hpp"
#include "experiments/text.hpp"

namespace gpudm::experiments {

ojson parse_json_text(const std::string& text, const std::string& source) {
  // Values nested deeper than this would overflow the stack when copied or dumped.
  if (std::string deep = json_depth_error(text, source); !deep.empty()) throw ConfigError(deep);
  // Duplicate keys are silently merged by JSON parsers; in a config they are almost always a
  // copy-paste mistake, so they are an error here.
  std::vector<std::set<std::string>> keys;
  std::vector<std::string> path;
  ojson::parser_callback_t cb = [&](int /*depth*/, ojson::parse_event_t ev, ojson& parsed) -> bool {
    switch (ev) {
      case ojson::parse_event_t::object_start: keys.emplace_back(); break;
      case ojson::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case ojson::parse_event_t::key: {
        const std::string k = parsed.get<std::string>();
        if (!keys.empty() && !keys.back().insert(k).second)
          throw ConfigError(source + ": duplicate key '" + k + "' in the same object");
        break;
      }
      default: break;
    }
    return true;
  };
  try {
    return ojson::parse(text, cb);
  } catch (const ojson::parse_error& e) {
    throw ConfigError(source + ":" + json_parse_error_text(text, e.byte, e.what()));
  } catch (const ojson::exception& e) {
    // A number beyond the double range ("1e999": out_of_range.406) carries no position.
    throw ConfigError(source + ": " + json_error_reason(e.what()));
  }
}

}  // namespace gpudm::experiments
