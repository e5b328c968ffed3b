#include "algorithms/core/text.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace gpudm {

std::size_t levenshtein(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string_view trim(std::string_view s, std::string_view chars) {
  const std::size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return s.substr(s.size());
  const std::size_t e = s.find_last_not_of(chars);
  return s.substr(b, e - b + 1);
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && lower(s.substr(s.size() - suffix.size())) == lower(suffix);
}

}  // namespace gpudm
