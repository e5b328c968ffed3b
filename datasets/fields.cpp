#include "datasets/fields.hpp"

namespace gpudm::datasets {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Appends fields to `out`; copies quoted fields with doubled quotes into `scratch`, reserved once
// per line for the whole line so that earlier views stay valid.
class Splitter {
 public:
  Splitter(std::string_view line, const FieldSyntax& s, std::vector<std::string_view>& out, std::string& scratch)
      : line_(line), s_(s), out_(out), scratch_(scratch) {}

  FieldsStatus run() {
    out_.clear();
    if (s_.delim == 0) blanks();
    else delimited();
    return status_;
  }

 private:
  bool is_quote(char c) const { return c == '"' || (s_.single_quotes && c == '\''); }
  void problem(FieldsStatus st) {
    if (status_ == FieldsStatus::ok) status_ = st;
  }

  // The closing quote of the field opened at `open` (doubled quotes skipped), or npos.
  std::size_t closing(std::size_t open, bool& doubled) const {
    const char q = line_[open];
    std::size_t k = open + 1;
    while ((k = line_.find(q, k)) != std::string_view::npos) {
      if (k + 1 < line_.size() && line_[k + 1] == q) {
        doubled = true;
        k += 2;
        continue;
      }
      return k;
    }
    return std::string_view::npos;
  }

  // The inside of the quoted field [open, close], doubled quotes made single.
  void push_quoted(std::size_t open, std::size_t close, bool doubled) {
    const std::string_view inside = line_.substr(open + 1, close - open - 1);
    if (!doubled) {
      out_.push_back(inside);
      return;
    }
    if (!scratch_ready_) {
      scratch_.clear();
      scratch_.reserve(line_.size());
      scratch_ready_ = true;
    }
    const std::size_t start = scratch_.size();
    for (std::size_t k = 0; k < inside.size(); ++k) {
      scratch_.push_back(inside[k]);
      if (inside[k] == line_[open]) ++k;  // the second quote of a pair
    }
    out_.push_back(std::string_view(scratch_.data() + start, scratch_.size() - start));
  }

  void push_unquoted(std::string_view f) {
    if (s_.trim) {
      while (!f.empty() && is_blank(f.front())) f.remove_prefix(1);
      while (!f.empty() && is_blank(f.back())) f.remove_suffix(1);
    }
    if (s_.strict && f.find('"') != std::string_view::npos) problem(FieldsStatus::stray_quote);
    out_.push_back(f);
  }

  void delimited() {
    const std::size_t n = line_.size();
    const char delim = s_.delim;
    std::size_t i = 0;
    while (true) {
      if (s_.trim)
        while (i < n && is_blank(line_[i]) && line_[i] != delim) ++i;
      if (i < n && is_quote(line_[i])) {
        bool doubled = false;
        const std::size_t close = closing(i, doubled);
        if (close == std::string_view::npos) {
          problem(FieldsStatus::open_quote);
        } else {
          std::size_t after = close + 1;
          if (s_.trim)
            while (after < n && is_blank(line_[after]) && line_[after] != delim) ++after;
          if (after >= n || line_[after] == delim) {
            push_quoted(i, close, doubled);
            if (after >= n) return;
            i = after + 1;
            continue;
          }
        }
      }
      std::size_t j = i;
      while (j < n && line_[j] != delim) ++j;  // fields are short: a loop beats memchr calls
      push_unquoted(line_.substr(i, j - i));
      if (j >= n) return;
      i = j + 1;
    }
  }

  void blanks() {
    const std::size_t n = line_.size();
    std::size_t i = 0;
    while (i < n) {
      while (i < n && is_blank(line_[i])) ++i;
      if (i >= n) break;
      if (is_quote(line_[i])) {
        bool doubled = false;
        const std::size_t close = closing(i, doubled);
        if (close != std::string_view::npos) {
          push_quoted(i, close, doubled);
          i = close + 1;
          continue;
        }
        problem(FieldsStatus::open_quote);
      }
      std::size_t j = i;
      while (j < n && !is_blank(line_[j])) ++j;
      push_unquoted(line_.substr(i, j - i));
      i = j;
    }
  }

  std::string_view line_;
  const FieldSyntax& s_;
  std::vector<std::string_view>& out_;
  std::string& scratch_;
  bool scratch_ready_ = false;
  FieldsStatus status_ = FieldsStatus::ok;
};

}  // namespace

FieldsStatus split_fields(std::string_view line, const FieldSyntax& syntax, std::vector<std::string_view>& out,
                          std::string& scratch) {
  return Splitter(line, syntax, out, scratch).run();
}

}  // namespace gpudm::datasets
