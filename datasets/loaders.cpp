#include "datasets/loaders.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <memory>
#include <functional>
#include <numeric>
#include <unordered_map>

#include "algorithms/core/error.hpp"
#include "algorithms/core/text.hpp"
#include "datasets/fields.hpp"
#include "datasets/file_bytes.hpp"

namespace gpudm::datasets {
namespace {

// Within a line: spaces and tabs, not newlines (a quoted field may hold one).
constexpr std::string_view kLineSpaces = " \t\r\v\f";
bool is_space(char c) { return kLineSpaces.find(c) != std::string_view::npos; }
std::string_view trim(std::string_view s) { return ::gpudm::trim(s, kLineSpaces); }

std::string shorten(std::string_view s) {
  if (s.size() <= 40) return std::string(s);
  return std::string(s.substr(0, 37)) + "...";
}

class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  // Next physical line without its terminator ("\n" or "\r\n").
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    std::size_t nl = text_.find('\n', pos_);
    if (nl == std::string_view::npos) nl = text_.size();
    line = text_.substr(pos_, nl - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = nl + 1;
    ++number_;
    return true;
  }
  std::size_t number() const { return number_; }
  std::size_t remaining() const { return pos_ < text_.size() ? text_.size() - pos_ : 0; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t number_ = 0;
};

enum class NumStatus { ok, not_number, not_finite, out_of_range };

// Fast path for plain decimals with at most 7 significant digits ("181", "-0.25", "0.00"):
// m and 10^k are exact floats and IEEE division rounds correctly, so the result equals
// from_chars'. Anything else (exponents, long mantissas) falls back to from_chars.
bool parse_simple_decimal(std::string_view s, float& out) {
  static constexpr float kPow10[8] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f};
  std::size_t i = 0;
  const bool neg = !s.empty() && s[0] == '-';
  if (neg) ++i;
  std::uint32_t m = 0;
  int digits = 0, frac = 0;
  bool dot = false, any = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      any = true;
      if (m == 0 && c == '0') {  // leading zeros are not significant
        if (dot) ++frac;
        continue;
      }
      if (++digits > 7) return false;
      m = m * 10 + static_cast<std::uint32_t>(c - '0');
      if (dot) ++frac;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  if (!any || frac > 7) return false;
  const float v = static_cast<float>(m) / kPow10[frac];
  out = neg ? -v : v;
  return true;
}

NumStatus parse_float(std::string_view s, float& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (parse_simple_decimal(s, out)) return NumStatus::ok;
  if (s.empty()) return NumStatus::not_number;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  if (ec == std::errc::result_out_of_range) return NumStatus::out_of_range;
  if (ec != std::errc() || p != end) return NumStatus::not_number;
  if (!std::isfinite(out)) return NumStatus::not_finite;
  return NumStatus::ok;
}

bool parse_double_full(std::string_view s, double& out) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && std::isfinite(out);
}

enum class Role { feature, label, dropped };
enum class Kind { numeric, nominal_declared, nominal_open };

struct Column {
  std::string name;
  Role role = Role::feature;
  Kind kind = Kind::numeric;
  std::vector<std::string> declared;                    // nominal_declared: value names
  std::unordered_map<std::string_view, int> ids;        // value -> id
  std::vector<std::string_view> open_values;            // nominal_open: values in first-seen order
  // Open values that were unescaped into the row's scratch buffer ("a""b") are copied here, so the
  // views above stay valid after the next row reuses the buffer (each string has its own heap
  // place and never moves). Not a deque: an empty std::deque allocates ~600 bytes, which for a
  // file of two million columns was 1.2 GB before a single value was read.
  std::vector<std::unique_ptr<std::string>> owned;
  std::vector<float> values;
  std::vector<std::uint32_t> missing_rows;

  // `ids` and `open_values` view `declared` and `owned`: a copy would view the original's strings,
  // so Columns only move (a moved vector keeps its elements where they are).
  Column() = default;
  Column(const Column&) = delete;
  Column& operator=(const Column&) = delete;
  Column(Column&&) = default;
  Column& operator=(Column&&) = default;

  void build_declared_index() {
    ids.clear();
    for (std::size_t i = 0; i < declared.size(); ++i) ids.emplace(declared[i], static_cast<int>(i));
  }
};

// Everything one parse needs to say where it is.
struct Context {
  std::string who;  // "dataset 'x': path"
  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    throw Error(who + ":" + std::to_string(line) + ": " + what);
  }
  [[noreturn]] void fail(const std::string& what) const { throw Error(who + ": " + what); }
};

int resolve_column(int c, std::size_t n, const char* key, const Context& ctx) {
  const int nn = static_cast<int>(n);
  const int r = c < 0 ? nn + c : c;
  if (r < 0 || r >= nn)
    ctx.fail(std::string(key) + " " + std::to_string(c) + " is out of range for " + std::to_string(n) +
             " columns");
  return r;
}

// Parsing holds each column's values (reserved from the file's size), its bookkeeping, and then
// the dataset's padded features and attributes: what the machine cannot hold is refused before
// the columns exist, with the numbers, instead of std::bad_alloc halfway through.
void require_parse_memory(std::size_t columns, std::size_t rows_hint, const Context& ctx) {
  const double c = static_cast<double>(columns);
  const double values = (static_cast<double>(rows_hint) * 1.125 + static_cast<double>(Dataset::kRowPad)) * c * 4.0;
  const double need = c * static_cast<double>(sizeof(Column) + sizeof(Attribute) + 64) + 2.0 * values;
  if (need < 256e6) return;
  if (std::string why = Dataset::memory_shortfall(need, Dataset::available_host_memory(),
                                                  "read " + std::to_string(columns) + " columns of about " +
                                                      std::to_string(rows_hint) + " rows");
      !why.empty())
    ctx.fail(why);
}

std::string column_ref(std::size_t c, const Column& col) {
  std::string s = "column " + std::to_string(c + 1);
  if (!col.name.empty()) s += " ('" + col.name + "')";
  return s;
}

bool is_missing_token(std::string_view f, const std::vector<std::string>& missing) {
  for (const auto& m : missing)
    if (f.size() == m.size() && (f.empty() || f[0] == m[0]) && f == m) return true;
  return false;
}

// Assigns roles from the options, after the schema's columns exist.
// The label column: by name when label_name is set, else `label_override` (KEEL @outputs) or
// label_column.
int label_index(const std::vector<Column>& cols, const LoadOptions& o, int label_override, const Context& ctx) {
  if (o.label_name.empty())
    return label_override >= 0 ? label_override : resolve_column(o.label_column, cols.size(), "label_column", ctx);
  std::string names;
  for (std::size_t c = 0; c < cols.size(); ++c) {
    if (cols[c].name == o.label_name) return static_cast<int>(c);
    if (c < 20) names += (c ? ", " : "") + cols[c].name;
  }
  if (cols.size() > 20) names += ", ...";
  ctx.fail("no column named '" + shorten(o.label_name) + "'" +
           (names.empty() || cols.front().name.empty() ? std::string(" (the file has no header row)") : " (columns: " + names + ")"));
}

void assign_roles(std::vector<Column>& cols, const LoadOptions& o, int label_override, const Context& ctx) {
  const std::size_t n = cols.size();
  const int label = label_index(cols, o, label_override, ctx);
  for (auto& c : cols) c.role = Role::feature;
  cols[static_cast<std::size_t>(label)].role = Role::label;
  for (int d : o.drop_columns) {
    const int r = resolve_column(d, n, "drop_columns entry", ctx);
    if (r == label) ctx.fail("drop_columns names the label column " + std::to_string(d));
    cols[static_cast<std::size_t>(r)].role = Role::dropped;
  }
  for (int nc : o.nominal_columns) {
    auto& c = cols[static_cast<std::size_t>(resolve_column(nc, n, "nominal_columns entry", ctx))];
    if (c.kind == Kind::numeric) c.kind = Kind::nominal_open;
  }
  if (o.all_nominal)
    for (auto& c : cols)
      if (c.role == Role::feature && c.kind == Kind::numeric) c.kind = Kind::nominal_open;
  Column& lc = cols[static_cast<std::size_t>(label)];
  if (o.task == Task::classification) {
    if (lc.kind == Kind::numeric) lc.kind = Kind::nominal_open;
  } else if (lc.kind != Kind::numeric) {
    ctx.fail("target " + column_ref(static_cast<std::size_t>(label), lc) +
             " is nominal; a regression dataset needs a numeric target");
  }
}

struct BodyFormat {
  char delim = ',';
  bool percent_comments = false;
  bool reject_sparse = false;
};

// Parses data lines until the end of the text. `pending` is a line already read (header-less csv).
std::size_t parse_body(LineReader& lr, std::vector<Column>& cols, const LoadOptions& o, const BodyFormat& bf,
                       const Context& ctx, LoadInfo& info, const std::string_view* pending,
                       std::size_t pending_line) {
  const std::size_t n = cols.size();
  std::size_t label = 0;
  for (std::size_t c = 0; c < n; ++c)
    if (cols[c].role == Role::label) label = c;
  const bool classification = o.task == Task::classification;
  std::vector<std::string_view> f;
  std::string scratch;
  f.reserve(n + 4);
  std::size_t rows = 0;
  std::string_view line;
  std::size_t line_no = pending_line;
  bool have = pending != nullptr;
  if (have) line = *pending;
  while (true) {
    if (!have) {
      if (!lr.next(line)) break;
      line_no = lr.number();
    }
    have = false;
    const std::string_view t = trim(line);
    if (t.empty()) continue;
    if (bf.percent_comments && t.front() == '%') continue;
    if (bf.reject_sparse && t.front() == '{') ctx.fail(line_no, "sparse ARFF rows ({index value, ...}) are not supported");
    split_fields(line, FieldSyntax::data(bf.delim), f, scratch);
    if (f.size() != n)
      ctx.fail(line_no, std::to_string(f.size()) + " columns, expected " + std::to_string(n));
    // The label first, so a row with a missing target can be skipped before anything is stored.
    {
      Column& lc = cols[label];
      const std::string_view v = f[label];
      if (v.empty() || is_missing_token(v, o.missing)) {
        if (o.drop_missing_target) {
          ++info.rows_dropped;
          continue;
        }
        ctx.fail(line_no, column_ref(label, lc) + ": missing " +
                              (classification ? "class label" : "target value") +
                              (classification ? std::string() : " (set drop_missing_target to skip such rows)"));
      }
    }
    if (o.drop_incomplete) {
      bool incomplete = false;
      for (std::size_t c = 0; c < n && !incomplete; ++c)
        incomplete = cols[c].role == Role::feature && is_missing_token(f[c], o.missing);
      if (incomplete) {
        ++info.rows_dropped;
        continue;
      }
    }
    for (std::size_t c = 0; c < n; ++c) {
      Column& col = cols[c];
      if (col.role == Role::dropped) continue;
      const std::string_view v = f[c];
      const bool missing_ok = col.role == Role::feature;
      if (missing_ok && is_missing_token(v, o.missing)) {
        col.missing_rows.push_back(static_cast<std::uint32_t>(rows));
        col.values.push_back(0.0f);
        continue;
      }
      if (v.empty()) ctx.fail(line_no, column_ref(c, col) + ": empty field, expected a value");
      switch (col.kind) {
        case Kind::numeric: {
          float x;
          switch (parse_float(v, x)) {
            case NumStatus::ok:
              break;
            case NumStatus::not_number:
              ctx.fail(line_no, column_ref(c, col) + ": expected a number, found '" + shorten(v) + "'");
            case NumStatus::not_finite:
              ctx.fail(line_no, column_ref(c, col) + ": '" + shorten(v) +
                                    "' is not a finite number (write missing values as '" +
                                    (o.missing.empty() ? std::string("?") : o.missing.front()) + "')");
            case NumStatus::out_of_range:
              ctx.fail(line_no, column_ref(c, col) + ": '" + shorten(v) + "' is out of float range");
          }
          col.values.push_back(x);
          break;
        }
        case Kind::nominal_declared: {
          auto it = col.ids.find(v);
          if (it == col.ids.end()) {
            std::string vals;
            for (std::size_t i = 0; i < col.declared.size() && i < 12; ++i)
              vals += (i ? ", " : "") + col.declared[i];
            if (col.declared.size() > 12) vals += ", ...";
            ctx.fail(line_no, column_ref(c, col) + ": '" + shorten(v) + "' is not one of the declared values {" +
                                  vals + "}");
          }
          col.values.push_back(static_cast<float>(it->second));
          break;
        }
        case Kind::nominal_open: {
          auto it = col.ids.find(v);
          if (it == col.ids.end()) {
            // A field inside `line` views the whole text and stays valid; one unescaped into
            // `scratch` does not (found by fuzz_dataset_csv: heap-use-after-free in finalize_open).
            std::string_view key = v;
            const std::less<const char*> before;  // a total order across allocations
            if (before(v.data(), line.data()) || before(line.data() + line.size(), v.data() + v.size()))
              key = *col.owned.emplace_back(std::make_unique<std::string>(v));
            it = col.ids.emplace(key, static_cast<int>(col.open_values.size())).first;
            col.open_values.push_back(key);
          }
          col.values.push_back(static_cast<float>(it->second));
          break;
        }
      }
    }
    ++rows;
    if (o.max_rows > 0 && rows >= o.max_rows) break;
  }
  info.lines = std::max(info.lines, lr.number());
  return rows;
}

// Orders open nominal values (numeric-aware) and rewrites the stored ids.
std::vector<std::string> finalize_open(Column& col) {
  std::vector<int> order(col.open_values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return label_less(col.open_values[a], col.open_values[b]); });
  std::vector<float> remap(order.size());
  std::vector<std::string> names(order.size());
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    remap[static_cast<std::size_t>(order[rank])] = static_cast<float>(rank);
    names[rank] = std::string(col.open_values[static_cast<std::size_t>(order[rank])]);
  }
  // A missing cell is stored as 0 here and becomes NaN in assemble(); in a column with no value
  // at all the remap table is empty, so such cells are left alone (found by fuzz_dataset_csv).
  for (float& v : col.values)
    if (static_cast<std::size_t>(v) < remap.size()) v = remap[static_cast<std::size_t>(v)];
  return names;
}

Dataset assemble(std::vector<Column>& cols, std::size_t rows, const LoadOptions& o, const Context& ctx) {
  if (rows == 0) ctx.fail("no data rows");
  std::vector<Attribute> attrs;
  std::vector<std::size_t> feature_cols;
  std::size_t label = 0;
  for (std::size_t c = 0; c < cols.size(); ++c) {
    Column& col = cols[c];
    if (col.role == Role::label) label = c;
    if (col.role != Role::feature) continue;
    Attribute a;
    a.name = col.name.empty() ? "x" + std::to_string(c + 1) : col.name;
    if (col.kind == Kind::numeric) {
      a.kind = AttributeKind::numeric;
    } else {
      a.kind = AttributeKind::nominal;
      a.values = col.kind == Kind::nominal_declared ? col.declared : finalize_open(col);
    }
    attrs.push_back(std::move(a));
    feature_cols.push_back(c);
  }
  if (attrs.empty()) ctx.fail("no feature columns (only the label column is left)");
  Column& lc = cols[label];
  std::vector<std::string> class_names;
  if (o.task == Task::classification) {
    class_names = lc.kind == Kind::nominal_declared ? lc.declared : finalize_open(lc);
    if (o.expected_classes > 0 && static_cast<int>(class_names.size()) != o.expected_classes) {
      std::string list;
      for (std::size_t i = 0; i < class_names.size() && i < 30; ++i) list += (i ? ", " : "") + class_names[i];
      if (class_names.size() > 30) list += ", ...";
      ctx.fail(std::to_string(class_names.size()) + " classes found (" + list + "), expected " +
               std::to_string(o.expected_classes));
    }
  }
  Dataset d(o.dataset, o.task, rows, std::move(attrs), std::move(class_names));
  for (std::size_t k = 0; k < feature_cols.size(); ++k) {
    Column& col = cols[feature_cols[k]];
    std::copy(col.values.begin(), col.values.end(), d.column(k));
    for (std::uint32_t r : col.missing_rows) d.set_missing(r, k);
  }
  if (o.task == Task::classification) {
    for (std::size_t r = 0; r < rows; ++r) d.set_label(r, static_cast<int>(lc.values[r]));
  } else {
    for (std::size_t r = 0; r < rows; ++r) d.set_target(r, lc.values[r]);
  }
  return d;
}

Dataset load_delimited(std::string_view text, const LoadOptions& o, const Context& ctx, LoadInfo& info) {
  BodyFormat bf;
  if (o.format == "csv") bf.delim = ',';
  else if (o.format == "tsv") bf.delim = '\t';
  else bf.delim = 0;  // whitespace
  if (o.delimiter != 0) bf.delim = o.delimiter;
  LineReader lr(text);
  std::string_view line;
  for (int i = 0; i < o.skip_lines; ++i)
    if (!lr.next(line)) ctx.fail("empty file (fewer than skip_lines=" + std::to_string(o.skip_lines) + " lines)");
  std::vector<std::string_view> f;
  std::string scratch;
  // First non-blank line: header or first data row.
  bool found = false;
  while (lr.next(line)) {
    if (!trim(line).empty()) {
      found = true;
      break;
    }
  }
  if (!found) ctx.fail("empty file (no data rows)");
  split_fields(line, FieldSyntax::data(bf.delim), f, scratch);
  // Rows from the first line's length (also the reserve below: no regrowing column vectors).
  std::size_t hint = text.size() / (line.size() + 1) + 16;
  if (o.max_rows > 0) hint = std::min(hint, o.max_rows);
  require_parse_memory(f.size(), hint, ctx);
  std::vector<Column> cols(f.size());
  if (o.expected_columns > 0 && static_cast<int>(f.size()) != o.expected_columns)
    ctx.fail(lr.number(), std::to_string(f.size()) + " columns, expected " + std::to_string(o.expected_columns));
  if (o.header)
    for (std::size_t c = 0; c < f.size(); ++c) cols[c].name = std::string(f[c]);
  assign_roles(cols, o, -1, ctx);
  info.file_columns = cols.size();
  for (auto& c : cols)
    if (c.role != Role::dropped) c.values.reserve(hint + hint / 8);
  const std::size_t first_line = lr.number();
  std::size_t rows;
  if (o.header) rows = parse_body(lr, cols, o, bf, ctx, info, nullptr, 0);
  else rows = parse_body(lr, cols, o, bf, ctx, info, &line, first_line);
  return assemble(cols, rows, o, ctx);
}

// Reads "name" (bare or quoted) from the front of s; returns the rest.
std::string_view take_name(std::string_view s, std::string& name, const Context& ctx, std::size_t line_no) {
  s = trim(s);
  if (s.empty()) ctx.fail(line_no, "@attribute: expected a name");
  if (s.front() == '\'' || s.front() == '"') {
    const std::size_t close = s.find(s.front(), 1);
    if (close == std::string_view::npos) ctx.fail(line_no, "@attribute: unterminated quoted name");
    name = std::string(s.substr(1, close - 1));
    return s.substr(close + 1);
  }
  std::size_t j = 0;
  while (j < s.size() && !is_space(s[j]) && s[j] != '{') ++j;
  name = std::string(s.substr(0, j));
  return s.substr(j);
}

// Parses "{a, 'b c', d}" into values.
std::vector<std::string> parse_value_list(std::string_view s, const Context& ctx, std::size_t line_no) {
  s = trim(s);
  const std::size_t close = s.rfind('}');
  if (s.empty() || s.front() != '{' || close == std::string_view::npos)
    ctx.fail(line_no, "@attribute: expected a value list {a, b, ...}, found '" + shorten(s) + "'");
  std::vector<std::string_view> f;
  std::string scratch;
  split_fields(s.substr(1, close - 1), FieldSyntax::data(','), f, scratch);
  std::vector<std::string> values;
  for (auto v : f) {
    if (v.empty()) ctx.fail(line_no, "@attribute: empty value in the value list");
    values.emplace_back(v);
  }
  if (values.empty()) ctx.fail(line_no, "@attribute: empty value list");
  return values;
}

Dataset load_arff_like(std::string_view text, const LoadOptions& o, const Context& ctx, LoadInfo& info, bool keel) {
  LineReader lr(text);
  std::string_view line;
  for (int i = 0; i < o.skip_lines; ++i) lr.next(line);
  std::vector<Column> cols;
  std::vector<std::string> outputs;
  bool data = false;
  bool any = false;
  while (lr.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t.front() == '%') continue;
    any = true;
    const std::size_t ln = lr.number();
    if (t.front() != '@')
      ctx.fail(ln, std::string("expected @relation, @attribute or @data before the data, found '") + shorten(t) + "'");
    std::size_t j = 1;
    while (j < t.size() && !is_space(t[j])) ++j;
    const std::string kw = lower(t.substr(1, j - 1));
    const std::string_view rest = t.substr(j);
    if (kw == "relation") continue;
    if (kw == "data") {
      data = true;
      break;
    }
    if (keel && (kw == "inputs" || kw == "input")) continue;
    if (keel && (kw == "outputs" || kw == "output")) {
      std::vector<std::string_view> f;
      std::string scratch;
      split_fields(rest, FieldSyntax::data(','), f, scratch);
      for (auto v : f) outputs.emplace_back(v);
      continue;
    }
    if (kw != "attribute")
      ctx.fail(ln, "unknown header line '@" + kw + "' (expected @relation, @attribute" +
                       (keel ? ", @inputs, @outputs" : "") + " or @data)");
    Column col;
    std::string_view type = trim(take_name(rest, col.name, ctx, ln));
    if (col.name.empty()) ctx.fail(ln, "@attribute: expected a name");
    if (type.empty()) ctx.fail(ln, "@attribute '" + col.name + "': expected a type (numeric, real, integer or {values})");
    if (type.front() == '{') {
      col.kind = Kind::nominal_declared;
      col.declared = parse_value_list(type, ctx, ln);
    } else {
      std::size_t k = 0;
      while (k < type.size() && !is_space(type[k]) && type[k] != '[') ++k;
      const std::string tw = lower(type.substr(0, k));
      if (tw == "numeric" || tw == "real" || tw == "integer") {
        col.kind = Kind::numeric;  // a KEEL range "[lo, hi]" may follow; it is informative only
      } else if (tw == "string" || tw == "date" || tw == "relational") {
        ctx.fail(ln, "@attribute '" + col.name + "': type '" + tw + "' is not supported (numeric, real, integer or {values})");
      } else {
        ctx.fail(ln, "@attribute '" + col.name + "': expected a type (numeric, real, integer or {values}), found '" +
                         shorten(type) + "'");
      }
    }
    cols.push_back(std::move(col));
  }
  if (!any) ctx.fail("empty file");
  if (!data) ctx.fail("no @data line after the header");
  if (cols.empty()) ctx.fail("no @attribute lines before @data");
  for (auto& c : cols) c.build_declared_index();
  int label_override = -1;
  if (keel && !outputs.empty() && o.label_column == -1) {
    for (std::size_t c = 0; c < cols.size(); ++c)
      if (cols[c].name == outputs.front()) label_override = static_cast<int>(c);
    if (label_override < 0) ctx.fail("@outputs names '" + outputs.front() + "', which is not an @attribute");
  }
  if (o.expected_columns > 0 && static_cast<int>(cols.size()) != o.expected_columns)
    ctx.fail(std::to_string(cols.size()) + " attributes declared, expected " + std::to_string(o.expected_columns));
  LoadOptions oo = o;
  if (o.task_from_header) {
    const int label = label_index(cols, o, label_override, ctx);
    oo.task = cols[static_cast<std::size_t>(label)].kind == Kind::numeric ? Task::regression : Task::classification;
  }
  assign_roles(cols, oo, label_override, ctx);
  info.file_columns = cols.size();
  BodyFormat bf;
  bf.delim = o.delimiter != 0 ? o.delimiter : ',';
  bf.percent_comments = true;
  bf.reject_sparse = true;
  // Each data row has at least one byte and a separator per column.
  std::size_t hint = lr.remaining() / (2 * cols.size()) + 1;
  if (o.max_rows > 0) hint = std::min(hint, o.max_rows);
  require_parse_memory(cols.size(), hint, ctx);
  LoadOptions body = oo;
  if (keel) body.missing.push_back("<null>");
  const std::size_t rows = parse_body(lr, cols, body, bf, ctx, info, nullptr, 0);
  return assemble(cols, rows, oo, ctx);
}

std::string who_of(const LoadOptions& o, const std::string& file_label) {
  return o.dataset.empty() ? file_label : "dataset '" + o.dataset + "': " + file_label;
}

}  // namespace

bool label_less(std::string_view a, std::string_view b) {
  double x, y;
  const bool na = parse_double_full(a, x);
  const bool nb = parse_double_full(b, y);
  if (na && nb) {
    if (x != y) return x < y;
    return a < b;
  }
  if (na != nb) return na;  // numbers first
  return a < b;
}

bool is_number_text(std::string_view s) {
  double x;
  return parse_double_full(s, x);
}

Dataset load_text(std::string_view text, const std::string& file_label, const LoadOptions& options, LoadInfo* info) {
  LoadInfo local;
  LoadInfo& li = info ? *info : local;
  const Context ctx{who_of(options, file_label)};
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte-order mark
  const std::string& f = options.format;
  if (f == "csv" || f == "tsv" || f == "whitespace") return load_delimited(text, options, ctx, li);
  if (f == "arff") return load_arff_like(text, options, ctx, li, false);
  if (f == "keel") return load_arff_like(text, options, ctx, li, true);
  ctx.fail("unknown loader format '" + f + "' (expected csv, tsv, whitespace, arff or keel)");
}

Dataset load_file(const std::string& path, const LoadOptions& options, LoadInfo* info) {
  const FileBytes fb = read_file_bytes(path, options.dataset.empty() ? "dataset" : "dataset '" + options.dataset + "'");
  LoadInfo local;
  LoadInfo& li = info ? *info : local;
  li.gzip = fb.gzip;
  Dataset d = load_text(fb.text, path, options, &li);
  d.source = "file";
  d.path = path;
  d.sha256 = fb.sha256;
  return d;
}

Dataset load_regression_csv(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".csv") == 0) name.resize(name.size() - 4);
  LoadOptions o;
  o.dataset = name;
  o.header = true;
  o.task = Task::regression;
  o.label_column = -1;
  o.missing = {"?", ""};
  return load_csv(path, o);
}

Dataset load_csv(const std::string& path, LoadOptions o, LoadInfo* info) {
  o.format = "csv";
  return load_file(path, o, info);
}
Dataset load_tsv(const std::string& path, LoadOptions o, LoadInfo* info) {
  o.format = "tsv";
  return load_file(path, o, info);
}
Dataset load_whitespace(const std::string& path, LoadOptions o, LoadInfo* info) {
  o.format = "whitespace";
  return load_file(path, o, info);
}
Dataset load_arff(const std::string& path, LoadOptions o, LoadInfo* info) {
  o.format = "arff";
  return load_file(path, o, info);
}
Dataset load_keel(const std::string& path, LoadOptions o, LoadInfo* info) {
  o.format = "keel";
  return load_file(path, o, info);
}

LoadOptions load_options_from_json(const nlohmann::json& j, const std::string& where) {
  LoadOptions o;
  if (!j.is_object()) throw Error(where + ": \"loader\" must be an object");
  static const std::vector<std::string> keys = {"format",      "delimiter",      "header",
                                                "skip_lines",  "label_column",   "drop_columns",
                                                "missing",     "drop_missing_target", "drop_incomplete", "all_nominal",
                                                "nominal_columns"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) {
      std::string list;
      for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
      throw Error(where + ": unknown loader key '" + it.key() + "' (known: " + list + ")");
    }
  try {
    o.format = j.value("format", std::string("csv"));
    if (j.contains("delimiter")) {
      const std::string d = j.at("delimiter").get<std::string>();
      if (d.size() != 1) throw Error(where + ": loader.delimiter must be a single character");
      o.delimiter = d[0];
    }
    o.header = j.value("header", false);
    o.skip_lines = j.value("skip_lines", 0);
    o.label_column = j.value("label_column", -1);
    if (j.contains("drop_columns")) o.drop_columns = j.at("drop_columns").get<std::vector<int>>();
    if (j.contains("missing")) o.missing = j.at("missing").get<std::vector<std::string>>();
    o.drop_missing_target = j.value("drop_missing_target", false);
    o.drop_incomplete = j.value("drop_incomplete", false);
    o.all_nominal = j.value("all_nominal", false);
    if (j.contains("nominal_columns")) o.nominal_columns = j.at("nominal_columns").get<std::vector<int>>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": bad loader value: " + e.what());
  }
  return o;
}

}  // namespace gpudm::datasets
