#include "experiments/tables.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "algorithms/core/error.hpp"
#include "experiments/results.hpp"
#include "experiments/text.hpp"
#include "gpudm/build_info.hpp"

namespace gpudm::experiments {

namespace fs = std::filesystem;

namespace {

const char* kDash = "—";
const char* kSurrogate = "†";

struct Cell {
  std::string text;    // value as printed (CSV gets this)
  std::string marker;  // "*" for estimated values (Markdown only)
  bool has_raw = false;
  double raw = 0.0;    // unscaled median (ratio columns use it)
  bool estimated = false;
};

std::string status_of(const ojson& run) {
  const ojson* s = find_path(run, "status");
  return s && s->is_string() ? s->get<std::string>() : "ok";
}

bool truthy(const ojson* v) { return v && v->is_boolean() && v->get<bool>(); }

std::string params_text(const ojson& run, const std::vector<std::string>& keys) {
  const ojson* p = find_path(run, "params");
  std::string s;
  if (!p || !p->is_object()) return s;
  for (const auto& k : keys) {
    auto it = p->find(k);
    if (it == p->end()) continue;
    if (!s.empty()) s += ", ";
    s += k + "=" + (it->is_array() || it->is_object() ? it->dump() : scalar_text(*it));
  }
  return s;
}

}  // namespace

namespace {
double mean_of(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}
}  // namespace

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Params whose values differ across runs (the interesting ones to print).
std::vector<std::string> varying_params(const std::vector<const ojson*>& runs) {
  std::vector<std::string> keys;
  std::map<std::string, std::set<std::string>> values;
  for (const ojson* r : runs) {
    const ojson* p = find_path(*r, "params");
    if (!p || !p->is_object()) continue;
    for (auto it = p->begin(); it != p->end(); ++it) {
      if (!values.count(it.key())) keys.push_back(it.key());
      values[it.key()].insert(it.value().dump());
    }
  }
  std::vector<std::string> out;
  for (const auto& k : keys)
    if (values[k].size() > 1) out.push_back(k);
  return out;
}

std::string run_label(const ojson& run, const std::vector<std::string>& vary) {
  const ojson* be = find_path(run, "backend");
  const ojson* ds = find_path(run, "dataset.name");
  std::string s = (be ? scalar_text(*be) : "?") + " on " + (ds ? scalar_text(*ds) : "?");
  const std::string p = params_text(run, vary);
  if (!p.empty()) s += " (" + p + ")";
  return s;
}

namespace {

struct Reasons {
  std::vector<std::string> lines;
  std::set<std::string> seen;
  void add(const ojson& run, const std::vector<std::string>& vary) {
    const ojson* reason = find_path(run, "reason");
    const std::string line = status_of(run) + ": " + run_label(run, vary) + ": " +
                             (reason && reason->is_string() ? one_line(reason->get<std::string>()) : "(no reason given)");
    if (seen.insert(line).second) lines.push_back(line);
  }
};

struct PaperTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int col(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    return -1;
  }
};

PaperTable load_paper(const std::string& dir, const std::string& name) {
  const fs::path p = fs::path(dir) / name;
  auto rows = parse_csv(read_text_file(p.string()), p.string());
  PaperTable t;
  if (rows.empty()) return t;
  t.header = rows.front();
  t.rows.assign(rows.begin() + 1, rows.end());
  return t;
}

bool select_matches(const ojson& run, const ojson& select) {
  if (!select.is_object()) return true;
  for (auto it = select.begin(); it != select.end(); ++it) {
    const ojson* v = find_path(run, it.key());
    if (!v || !loose_equal(*v, it.value())) return false;
  }
  return true;
}

std::string row_value(const ojson& run, const ojson& row_spec) {
  const ojson* v = find_path(run, row_spec["run"].get<std::string>());
  if (!v) return "";
  const std::string raw = scalar_text(*v);
  if (row_spec.contains("map")) {
    auto it = row_spec["map"].find(raw);
    if (it != row_spec["map"].end()) return scalar_text(*it);
  }
  return raw;
}

// Equal for a join: objects and arrays regardless of key order, scalars as loose_equal.
bool join_equal(const ojson& a, const ojson& b) {
  if (a.is_structured() || b.is_structured()) return nlohmann::json::parse(a.dump()) == nlohmann::json::parse(b.dump());
  return loose_equal(a, b);
}

// The peer row joined to `run` by column `col` ("peer": NAME or {"name": NAME, "where": {...}}),
// nullptr when the column has no peer or no row matches.
const ojson* peer_row(const ojson& run, const ojson& col, const std::vector<PeerResults>& peers) {
  const ojson& spec = col["peer"];
  const std::string name = spec.is_string() ? spec.get<std::string>() : spec["name"].get<std::string>();
  const ojson where = spec.is_object() ? spec.value("where", ojson::object()) : ojson::object();
  for (const auto& peer : peers) {
    if (peer.name != name) continue;
    for (const auto& row : peer.rows) {
      bool ok = true;
      for (auto it = peer.match.begin(); ok && it != peer.match.end(); ++it) {
        const ojson* theirs = find_path(row, it.key());
        const ojson* ours = find_path(run, it.value().get<std::string>());
        ok = theirs && ours && join_equal(*theirs, *ours);
      }
      for (auto it = where.begin(); ok && it != where.end(); ++it) {
        const ojson* theirs = find_path(row, it.key());
        ok = theirs && join_equal(*theirs, it.value());
      }
      if (ok) return &row;
    }
  }
  return nullptr;
}

// A value column's value for `run`: the dotted path into the run, or with "peer" into the joined
// peer row ("peer.X"), or into the run with "{peer.X}" replaced by the row's X. nullptr when absent.
const ojson* column_value(const ojson& run, const ojson& col, const std::vector<PeerResults>& peers) {
  std::string path = col["value"].get<std::string>();
  if (!col.contains("peer")) return find_path(run, path);
  const ojson* row = peer_row(run, col, peers);
  if (!row) return nullptr;
  if (path.rfind("peer.", 0) == 0) return find_path(*row, std::string_view(path).substr(5));
  for (std::size_t open = path.find("{peer."); open != std::string::npos; open = path.find("{peer.")) {
    const std::size_t close = path.find('}', open);
    if (close == std::string::npos) return nullptr;
    const ojson* v = find_path(*row, std::string_view(path).substr(open + 6, close - open - 6));
    if (!v || v->is_structured()) return nullptr;
    path.replace(open, close - open + 1, scalar_text(*v));
  }
  return find_path(run, path);
}

// One CSV record. The separator is appended on its own: GCC 12 warns falsely (-Wrestrict) on
// "," + field once this is inlined.
std::string csv_line(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += csv_field(v[i]);
  }
  s += '\n';
  return s;
}

std::string value_spec_text(const ojson& col) {
  return col.contains("format") ? col["format"].get<std::string>() : std::string();
}

const char* kSurrogateNote =
    "surrogate dataset: a generated stand-in with the real one's shape (datasets/catalog.json).";
const char* kEstimatedNote =
    "* estimated (metrics.estimated): not a whole measured run; the method is in metrics.estimate_method and the notes "
    "below (a replay of the recorded run, or a measured part of the run scaled).";

struct Header {
  std::vector<std::string> names;
  std::vector<bool> right;
  void add(const std::string& name, bool right_aligned) {
    names.push_back(name);
    right.push_back(right_aligned);
  }
};

// One table's block: the Markdown heading, table (or `empty` when it has no rows) and notes, and
// its CSV records (the file is shared by the tables; its first column names the table).
void write_block(RenderedTables& out, const std::string& title, const Header& header,
                 const std::vector<std::vector<std::string>>& md_rows, std::vector<std::vector<std::string>> csv_rows,
                 const std::string& empty, const std::vector<std::string>& notes) {
  std::string& m = out.markdown;
  m += "## " + title + "\n\n";
  m += md_rows.empty() ? empty : markdown_table(header.names, md_rows, header.right) + "\n";
  for (const auto& n : notes) m += "- " + n + "\n";
  if (!notes.empty()) m += "\n";

  if (!out.csv.empty()) out.csv += "\n";
  std::vector<std::string> csv_header{"table"};
  csv_header.insert(csv_header.end(), header.names.begin(), header.names.end());
  out.csv += csv_line(csv_header);
  for (auto& r : csv_rows) {
    r.insert(r.begin(), title);
    out.csv += csv_line(r);
  }
}

// ---- where the runs were measured: one origin per distinct (commit, machine) ----

const ojson& object_or_empty(const ojson* j) {
  static const ojson kEmpty = ojson::object();
  return j && j->is_object() ? *j : kEmpty;
}

std::string text_at(const ojson& j, std::string_view path, const std::string& otherwise = "") {
  const ojson* v = find_path(j, path);
  return v && !v->is_null() ? scalar_text(*v) : otherwise;
}

// "0123456789ab", "0123456789ab-dirty", "unknown".
std::string commit_text(const ojson& provenance) {
  std::string sha = text_at(provenance, "git_sha", "unknown");
  if (sha.size() > 12) sha.resize(12);
  return truthy(find_path(provenance, "git_dirty")) ? sha + "-dirty" : sha;
}

// "NVIDIA H200", "2 × NVIDIA H200", "NVIDIA H200 + NVIDIA A100": each model with its count.
std::string gpus_text(const ojson* gpus) {
  std::vector<std::pair<std::string, int>> models;
  if (gpus && gpus->is_array())
    for (const auto& g : *gpus) {
      const std::string name = scalar_text(g);
      auto it = std::find_if(models.begin(), models.end(), [&](const auto& m) { return m.first == name; });
      if (it == models.end()) models.emplace_back(name, 1);
      else ++it->second;
    }
  std::string s;
  for (const auto& [name, count] : models) {
    if (!s.empty()) s += " + ";
    if (count > 1) s += std::to_string(count) + " × ";
    s += name;
  }
  return s;
}

// "NVIDIA H200 + <CPU model> (16 threads)" from a run's provenance "machine".
std::string machine_text(const ojson& machine) {
  std::string s = gpus_text(find_path(machine, "gpus"));
  if (!s.empty()) s += " + ";
  s += text_at(machine, "cpu_model", "unknown CPU");
  if (const ojson* threads = find_path(machine, "cpu_threads")) s += " (" + scalar_text(*threads) + " threads)";
  return s;
}

// The file's top-level provenance and environment in the shape of a run's provenance.
ojson file_provenance(const ojson& results) {
  const ojson& prov = object_or_empty(find_path(results, "provenance"));
  const ojson& env = object_or_empty(find_path(results, "environment"));
  ojson machine = ojson::object();
  if (prov.contains("hostname")) machine["host"] = prov["hostname"];
  if (env.contains("cpu_model")) machine["cpu_model"] = env["cpu_model"];
  if (env.contains("cpu_cores")) machine["cpu_threads"] = env["cpu_cores"];
  machine["gpus"] = device_names(env);
  ojson out = ojson::object();
  for (const char* k : {"git_sha", "git_dirty", "utc_time"})
    if (prov.contains(k)) out[k] = prov[k];
  out["machine"] = std::move(machine);
  return out;
}

RunOrigin origin_of(const ojson& provenance) {
  const ojson& machine = object_or_empty(find_path(provenance, "machine"));
  RunOrigin o;
  o.commit = commit_text(provenance);
  o.machine = machine_text(machine);
  o.host = text_at(machine, "host");
  o.first_utc = o.last_utc = text_at(provenance, "utc_time");
  return o;
}

// Runs without their own provenance in a file where others have one were measured by one of
// the file's earlier invocations; in a file where none has one, by any of its invocations, the
// last included. Which one is not known, so all of them are named.
RunOrigin unrecorded_origin(const ojson& results, bool with_last) {
  std::vector<std::string> candidates;
  const ojson* previous = find_path(results, "provenance.previous");
  ojson invocations = previous && previous->is_array() ? *previous : ojson::array();
  if (with_last) invocations.push_back(object_or_empty(find_path(results, "provenance")));
  for (const auto& p : invocations) {
    const std::string c = "gpudm " + commit_text(p) + " on host " + text_at(p, "hostname", "unknown");
    if (std::find(candidates.begin(), candidates.end(), c) == candidates.end()) candidates.push_back(c);
  }
  if (with_last && candidates.size() == 1) return origin_of(file_provenance(results));  // one commit on one host
  RunOrigin o;
  o.unrecorded = std::string("recorded before runs carried their own provenance; measured by one of the file's ") +
                 (with_last ? "invocations (the last on " + machine_text(file_provenance(results)["machine"]) + "):"
                            : "earlier invocations:");
  for (std::size_t i = 0; i < candidates.size(); ++i) o.unrecorded += (i ? "; " : " ") + candidates[i];
  return o;
}

// "a".."z", "aa", "ab", ...
std::string tag_name(std::size_t i) {
  std::string t(1, static_cast<char>('a' + i % 26));
  return i < 26 ? t : tag_name(i / 26 - 1) + t;
}

bool has_own_provenance(const ojson& run) {
  const ojson* p = find_path(run, "provenance");
  return p && p->is_object();
}

// The origins of the runs the tables show, and each run's.
class Origins {
 public:
  Origins(const ojson& results, const std::vector<const ojson*>& shown) {
    bool own_anywhere = false;
    if (const ojson* runs = find_path(results, "runs"); runs && runs->is_array())
      for (const auto& r : *runs) own_anywhere = own_anywhere || has_own_provenance(r);
    const ojson* previous = find_path(results, "provenance.previous");
    // A file resumed across invocations: a run without its own provenance is not put down to the last one.
    const bool resumed = previous && previous->is_array() && !previous->empty();
    const RunOrigin fallback = resumed ? unrecorded_origin(results, !own_anywhere) : origin_of(file_provenance(results));
    // Origins of measurements: a skipped or failed run measured nothing (its cell says so and the
    // file keeps its reason), so a later invocation that only tried it again is not an origin of
    // the table; when no shown run is ok, every shown run counts.
    bool any_ok = false;
    for (const ojson* r : shown) any_ok = any_ok || status_of(*r) == "ok";
    for (const ojson* r : shown)
      if (!any_ok || status_of(*r) == "ok") add(r, has_own_provenance(*r) ? origin_of((*r)["provenance"]) : fallback);
    if (list_.empty()) list_.push_back(origin_of(file_provenance(results)));
    if (list_.size() > 1)
      for (std::size_t i = 0; i < list_.size(); ++i) list_[i].tag = tag_name(i);
  }

  // " [a]", " [a,b]": the origins of `runs` when the tables show more than one, else "".
  std::string tag(const std::vector<const ojson*>& runs) const {
    std::set<std::size_t> mine;
    for (const ojson* r : runs)
      if (auto it = of_.find(r); it != of_.end()) mine.insert(it->second);
    if (list_.size() < 2 || mine.empty()) return "";
    std::string s = " [";
    for (std::size_t i : mine) {
      if (s.size() > 2) s += ',';
      s += list_[i].tag;
    }
    return s + "]";
  }

  const std::vector<RunOrigin>& list() const { return list_; }

 private:
  void add(const ojson* run, const RunOrigin& o) {
    const std::string key = o.commit + '\n' + o.machine + '\n' + o.host + '\n' + o.unrecorded;
    auto it = index_.find(key);
    if (it == index_.end()) {
      it = index_.emplace(key, list_.size()).first;
      list_.push_back(o);
    } else if (!o.first_utc.empty()) {
      RunOrigin& known = list_[it->second];
      if (known.first_utc.empty() || o.first_utc < known.first_utc) known.first_utc = o.first_utc;
      if (o.last_utc > known.last_utc) known.last_utc = o.last_utc;
    }
    of_[run] = it->second;
  }

  std::vector<RunOrigin> list_;
  std::map<std::string, std::size_t> index_;  // key -> position in list_
  std::map<const ojson*, std::size_t> of_;    // run -> position in list_
};

// ---- a table in the paper's layout: select -> rows -> header -> cells -> write ----

using Tuple = std::vector<std::string>;

// A run's row key: its value of every row spec.
Tuple row_key(const ojson& run, const ojson& row_specs) {
  Tuple t;
  for (const auto& rs : row_specs) t.push_back(row_value(run, rs));
  return t;
}

// Runs that belong to the table: those matched by some value column's select.
std::vector<const ojson*> select_runs(const std::vector<const ojson*>& runs, const ojson& col_specs) {
  std::vector<const ojson*> mine;
  for (const ojson* r : runs) {
    for (const auto& c : col_specs) {
      if (c.contains("value") && select_matches(*r, c.value("select", ojson::object()))) {
        mine.push_back(r);
        break;
      }
    }
  }
  return mine;
}

struct Row {
  Tuple key;
  int paper_row = -1;  // index into paper.rows
  bool ours = false;
};

struct TableRows {
  std::vector<Row> rows;
  std::size_t paper_only = 0;  // paper rows not shown (no run of ours, and no all_paper_rows)
};

// The table's rows: the paper's rows in the paper's order, then ours that the paper lacks.
class RowPlacer {
 public:
  RowPlacer(const ojson& spec, const PaperTable& paper) : spec_(spec), row_specs_(spec["rows"]), paper_(paper) {}

  TableRows place(const std::vector<const ojson*>& mine) const {
    std::vector<Tuple> our_rows;
    for (const ojson* r : mine) {
      Tuple t = row_key(*r, row_specs_);
      if (std::find(our_rows.begin(), our_rows.end(), t) == our_rows.end()) our_rows.push_back(t);
    }
    TableRows out;
    std::vector<bool> placed(our_rows.size(), false);
    bool any_paper_key = false;
    for (const auto& rs : row_specs_) any_paper_key = any_paper_key || rs.contains("paper");
    if (spec_.contains("paper_csv") && any_paper_key)
      for (std::size_t pr = 0; pr < paper_.rows.size(); ++pr) place_paper_row(pr, our_rows, placed, out);
    for (std::size_t k = 0; k < our_rows.size(); ++k)
      if (!placed[k]) out.rows.push_back(Row{our_rows[k], -1, true});
    return out;
  }

 private:
  // Our rows that match paper row `pr`, else the paper's row alone (all_paper_rows) or a count.
  void place_paper_row(std::size_t pr, const std::vector<Tuple>& our_rows, std::vector<bool>& placed, TableRows& out) const {
    bool matched = false;
    for (std::size_t k = 0; k < our_rows.size(); ++k) {
      if (!placed[k] && matches(paper_.rows[pr], our_rows[k])) {
        out.rows.push_back(Row{our_rows[k], static_cast<int>(pr), true});
        placed[k] = true;
        matched = true;
      }
    }
    if (matched) return;
    if (!spec_.value("all_paper_rows", false)) {
      ++out.paper_only;
      return;
    }
    Tuple t;
    for (const auto& rs : row_specs_) {
      const int c = rs.contains("paper") ? paper_.col(rs["paper"].get<std::string>()) : -1;
      t.push_back(c >= 0 && static_cast<std::size_t>(c) < paper_.rows[pr].size() ? paper_.rows[pr][static_cast<std::size_t>(c)] : "");
    }
    out.rows.push_back(Row{t, static_cast<int>(pr), false});
  }

  bool matches(const std::vector<std::string>& prow, const Tuple& t) const {
    for (std::size_t i = 0; i < row_specs_.size(); ++i) {
      if (!row_specs_[i].contains("paper")) continue;
      const int c = paper_.col(row_specs_[i]["paper"].get<std::string>());
      if (c < 0 || static_cast<std::size_t>(c) >= prow.size()) return false;
      if (!loose_equal(ojson(prow[static_cast<std::size_t>(c)]), ojson(t[i]))) return false;
    }
    return true;
  }

  const ojson& spec_;
  const ojson& row_specs_;
  const PaperTable& paper_;
};

// A column with only "paper" shows the paper's number alone (hardware we do not have).
bool paper_column(const ojson& c) {
  return !c.contains("value") && !c.contains("ratio") && !c.contains("product") && !c.contains("difference");
}

Header table_header(const ojson& row_specs, const ojson& col_specs) {
  Header h;
  for (const auto& rs : row_specs) h.add(rs.value("label", rs["run"].get<std::string>()), false);
  for (const auto& c : col_specs) {
    if (c.value("hidden", false)) continue;
    if (!paper_column(c)) h.add(c["label"].get<std::string>(), true);
    if (c.contains("paper")) h.add(c["label"].get<std::string>() + " (paper)", true);
  }
  return h;
}

// A value column's cell: the median (or "aggregate": "mean") over the row's ok runs it selects
// of the value (divided run by run by "divide_by" where given), else what kept them out.
Cell value_cell(const std::vector<const ojson*>& row_runs, const ojson& c, const std::vector<PeerResults>& peers,
                const std::vector<std::string>& vary, Reasons& reasons) {
  Cell cell;
  std::vector<double> values;
  bool failed = false, skipped = false, ok_without_value = false;
  for (const ojson* r : row_runs) {
    if (!select_matches(*r, c.value("select", ojson::object()))) continue;
    const std::string st = status_of(*r);
    if (st == "ok") {
      const ojson* v = column_value(*r, c, peers);
      const ojson* d = c.contains("divide_by") ? find_path(*r, c["divide_by"].get<std::string>()) : nullptr;
      const bool divided = c.contains("divide_by");
      if (v && v->is_number() && (!divided || (d && d->is_number() && d->get<double>() != 0.0))) {
        values.push_back(divided ? v->get<double>() / d->get<double>() : v->get<double>());
        cell.estimated = cell.estimated || truthy(find_path(*r, "metrics.estimated"));
      } else {
        ok_without_value = true;
      }
    } else {
      (st == "skipped" ? skipped : failed) = true;
      reasons.add(*r, vary);
    }
  }
  if (!values.empty()) {
    cell.has_raw = true;
    cell.raw = c.value("aggregate", std::string("median")) == "mean" ? mean_of(values) : median_of(values);
    cell.text = format_number(cell.raw * c.value("scale", 1.0), value_spec_text(c));
  } else if (failed) {
    cell.text = "failed";
  } else if (skipped) {
    cell.text = "skipped";
  } else if (ok_without_value) {
    cell.text = "n/a";
  } else {
    cell.text = kDash;
  }
  if (cell.estimated) cell.marker = "*";
  return cell;
}

// A ratio column's cell ("ratio": the quotient of the two medians it names), a difference
// column's ("difference": the first median less the second) or a product column's ("product": two
// ratio cells multiplied, a chained ratio).
Cell combined_cell(const ojson& c, std::map<std::string, Cell>& cells) {
  const bool product = c.contains("product"), difference = c.contains("difference");
  const ojson& operands = product ? c["product"] : difference ? c["difference"] : c["ratio"];
  const Cell& a = cells[operands[0].get<std::string>()];
  const Cell& b = cells[operands[1].get<std::string>()];
  Cell cell;
  if (a.has_raw && b.has_raw && (product || difference || b.raw != 0.0)) {
    cell.has_raw = true;
    cell.raw = product ? a.raw * b.raw : difference ? a.raw - b.raw : a.raw / b.raw;
    cell.text = format_number(cell.raw * c.value("scale", 1.0), value_spec_text(c));
    cell.estimated = a.estimated || b.estimated;
    if (cell.estimated) cell.marker = "*";
  } else {
    cell.text = kDash;
  }
  return cell;
}

// The cells of one row of a paper-layout table, and its Markdown and CSV texts.
struct RowRenderer {
  const ojson& row_specs;
  const ojson& col_specs;
  const PaperTable& paper;
  const std::vector<PeerResults>& peers;
  const std::vector<std::string>& vary;
  const Origins& origins;
  Reasons reasons;
  bool any_surrogate = false, any_estimated = false;
  std::vector<std::vector<std::string>> md_rows, csv_rows;

  void add(const Row& row, const std::vector<const ojson*>& mine) {
    std::vector<const ojson*> row_runs;
    for (const ojson* r : mine)
      if (row_key(*r, row_specs) == row.key) row_runs.push_back(r);
    bool surrogate = false;
    for (const ojson* r : row_runs) surrogate = surrogate || truthy(find_path(*r, "dataset.surrogate"));
    any_surrogate = any_surrogate || surrogate;

    std::map<std::string, Cell> cells;  // by column label
    for (const auto& c : col_specs)
      if (c.contains("value")) cells[c["label"].get<std::string>()] = value_cell(row_runs, c, peers, vary, reasons);
    for (const auto& c : col_specs)
      if (c.contains("ratio") || c.contains("difference")) cells[c["label"].get<std::string>()] = combined_cell(c, cells);
    for (const auto& c : col_specs)  // after the ratios they multiply
      if (c.contains("product")) cells[c["label"].get<std::string>()] = combined_cell(c, cells);

    std::vector<std::string> md, csv;
    for (std::size_t i = 0; i < row.key.size(); ++i) {
      std::string k = row.key[i].empty() ? kDash : row.key[i];
      csv.push_back(row.key[i]);
      if (i == 0 && surrogate) k += " " + std::string(kSurrogate);
      if (i == 0) k += origins.tag(row_runs);
      md.push_back(k);
    }
    for (const auto& c : col_specs) {
      if (c.value("hidden", false)) continue;
      if (!paper_column(c)) {
        const Cell& cell = cells[c["label"].get<std::string>()];
        std::string text = row.ours ? cell.text : kDash;
        md.push_back(text + (row.ours ? cell.marker : ""));
        csv.push_back(text == kDash ? "" : text);
        any_estimated = any_estimated || (row.ours && !cell.marker.empty());
      }
      if (c.contains("paper")) {
        const std::string p = paper_value(row, c);
        md.push_back(p.empty() ? kDash : p);
        csv.push_back(p);
      }
    }
    md_rows.push_back(std::move(md));
    csv_rows.push_back(std::move(csv));
  }

  std::string paper_value(const Row& row, const ojson& c) const {
    const int col = paper.col(c["paper"].get<std::string>());
    if (row.paper_row >= 0 && col >= 0 && static_cast<std::size_t>(col) < paper.rows[static_cast<std::size_t>(row.paper_row)].size())
      return paper.rows[static_cast<std::size_t>(row.paper_row)][static_cast<std::size_t>(col)];
    return "";
  }
};

std::vector<std::string> table_notes(const ojson& spec, const TableRows& placed, const RowRenderer& body) {
  std::vector<std::string> notes;
  if (spec.contains("paper_csv"))
    notes.push_back("Paper values (columns marked \"(paper)\") are the published numbers from experiments/paper_tables/" +
                    spec["paper_csv"].get<std::string>() + ", measured on the paper's hardware; ours are from this run.");
  if (placed.paper_only > 0)
    notes.push_back(std::to_string(placed.paper_only) + " paper row(s) not run in this experiment are not shown.");
  // A ratio whose operand reads a peer's row divides numbers of two runs (theirs and ours).
  auto reads_peer = [&](const std::string& label) {
    for (const auto& o : spec["columns"])
      if (o.value("label", std::string()) == label && o.contains("peer")) return true;
    return false;
  };
  for (const auto& c : spec["columns"])
    if (c.contains("ratio")) {
      const std::string a = c["ratio"][0].get<std::string>(), b = c["ratio"][1].get<std::string>();
      notes.push_back("\"" + c["label"].get<std::string>() + "\" = \"" + a + "\" / \"" + b + "\" (" +
                      (reads_peer(a) || reads_peer(b) ? "operands from different runs: a peer's file or ours"
                                                      : "medians of the same run") +
                      ").");
    }
  for (const auto& c : spec["columns"])
    if (c.contains("difference"))
      notes.push_back("\"" + c["label"].get<std::string>() + "\" = \"" + c["difference"][0].get<std::string>() + "\" - \"" +
                      c["difference"][1].get<std::string>() + "\" (the two cells of the same row).");
  for (const auto& c : spec["columns"])
    if (c.contains("product"))
      notes.push_back("\"" + c["label"].get<std::string>() + "\" = \"" + c["product"][0].get<std::string>() + "\" x \"" +
                      c["product"][1].get<std::string>() + "\" (a chained ratio: its two factors were measured apart).");
  if (body.any_surrogate) notes.push_back(std::string(kSurrogate) + " " + kSurrogateNote);
  if (body.any_estimated) notes.push_back(kEstimatedNote);
  if (spec.contains("notes"))
    for (const auto& n : spec["notes"]) notes.push_back(n.get<std::string>());
  for (const auto& r : body.reasons.lines) notes.push_back(r);
  return notes;
}

// One table in the paper's layout.
void render_one(const ojson& results, const ojson& spec, const std::string& paper_dir,
                const std::vector<PeerResults>& peers, const Origins& origins, RenderedTables& out) {
  std::vector<const ojson*> runs;
  for (const auto& r : results["runs"]) runs.push_back(&r);
  const std::vector<std::string> vary = varying_params(runs);
  const std::vector<const ojson*> mine = select_runs(runs, spec["columns"]);
  PaperTable paper;
  if (spec.contains("paper_csv")) paper = load_paper(paper_dir, spec["paper_csv"].get<std::string>());
  const TableRows placed = RowPlacer(spec, paper).place(mine);
  const Header header = table_header(spec["rows"], spec["columns"]);
  RowRenderer body{spec["rows"], spec["columns"], paper, peers, vary, origins, {}, false, false, {}, {}};
  for (const auto& row : placed.rows) body.add(row, mine);
  write_block(out, spec.value("title", std::string("Table")), header, body.md_rows, std::move(body.csv_rows),
              "_No run of this experiment matches this table's columns._\n\n", table_notes(spec, placed, body));
}

// Numeric metrics worth a default-table column, most useful first.
std::vector<std::string> pick_metrics(const std::vector<const ojson*>& runs) {
  static const std::vector<std::string> preferred = {
      "gpops_per_s", "instances_per_s", "achieved_gb_per_s", "gb_per_s", "gflops",     "accuracy",
      "rmse",        "mae",             "tree_size",         "leaves",   "iterations", "value"};
  std::vector<std::string> present;
  for (const ojson* r : runs) {
    if (status_of(*r) != "ok") continue;
    const ojson* m = find_path(*r, "metrics");
    if (!m || !m->is_object()) continue;
    for (auto it = m->begin(); it != m->end(); ++it)
      if (it.value().is_number() && it.key() != "checksum_exact" &&
          std::find(present.begin(), present.end(), it.key()) == present.end())
        present.push_back(it.key());
  }
  std::vector<std::string> out;
  for (const auto& p : preferred)
    if (std::find(present.begin(), present.end(), p) != present.end()) out.push_back(p);
  for (const auto& p : present)
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  if (out.size() > 5) out.resize(5);
  return out;
}

void render_default(const ojson& results, const Origins& origins, RenderedTables& out) {
  std::vector<const ojson*> runs;
  for (const auto& r : results["runs"]) runs.push_back(&r);
  const auto vary = varying_params(runs);
  const auto metrics = pick_metrics(runs);
  std::set<std::string> seeds;
  for (const ojson* r : runs) seeds.insert(find_path(*r, "seed") ? find_path(*r, "seed")->dump() : "");

  Header header;
  header.add("Dataset", false);
  header.add("Backend", false);
  for (const auto& v : vary) header.add(v, true);
  if (seeds.size() > 1) header.add("Seed", true);
  for (const char* h : {"Median (s)", "Min (s)", "Max (s)"}) header.add(h, true);
  for (const auto& m : metrics) header.add(m, true);
  header.add("Validation", false);
  header.add("Status", false);

  Reasons reasons;
  bool any_surrogate = false, any_estimated = false;
  std::vector<std::vector<std::string>> md_rows, csv_rows;
  for (const ojson* r : runs) {
    std::vector<std::string> row;
    const ojson* ds = find_path(*r, "dataset.name");
    const bool surrogate = truthy(find_path(*r, "dataset.surrogate"));
    any_surrogate = any_surrogate || surrogate;
    row.push_back(ds ? scalar_text(*ds) : "?");
    const ojson* be = find_path(*r, "backend");
    row.push_back(be ? scalar_text(*be) : "?");
    for (const auto& v : vary) {
      const ojson* p = find_path(*r, "params." + v);
      row.push_back(p ? (p->is_structured() ? p->dump() : scalar_text(*p)) : "");
    }
    if (seeds.size() > 1) row.push_back(find_path(*r, "seed") ? scalar_text(*find_path(*r, "seed")) : "");
    const bool ok = status_of(*r) == "ok";
    const bool estimated = truthy(find_path(*r, "metrics.estimated"));
    any_estimated = any_estimated || (ok && estimated);
    for (const char* k : {"timing.median", "timing.min", "timing.max"}) {
      const ojson* v = find_path(*r, k);
      row.push_back(ok && v && v->is_number() ? format_number(v->get<double>(), ".4g") + (estimated ? "*" : "") : kDash);
    }
    for (const auto& m : metrics) {
      const ojson* v = find_path(*r, "metrics." + m);
      row.push_back(ok && v && v->is_number() ? format_number(v->get<double>(), ".4g") : kDash);
    }
    const ojson* passed = find_path(*r, "validation.passed");
    const ojson* refb = find_path(*r, "validation.reference_backend");
    std::string val = kDash;
    if (passed && passed->is_boolean())
      val = std::string(passed->get<bool>() ? "ok" : "MISMATCH") +
            (refb && refb->is_string() ? " vs " + refb->get<std::string>() : "");
    else if (truthy(find_path(*r, "validation.is_reference")))
      val = "reference";
    row.push_back(val);
    row.push_back(status_of(*r));
    if (!ok) reasons.add(*r, vary);
    std::vector<std::string> csv = row;
    for (auto& c : csv) {
      if (c == kDash) c.clear();
      if (!c.empty() && c.back() == '*') c.pop_back();
    }
    if (surrogate) row[0] += " " + std::string(kSurrogate);
    row[0] += origins.tag({r});
    md_rows.push_back(std::move(row));
    csv_rows.push_back(std::move(csv));
  }

  const ojson* title = find_path(results, "experiment.title");
  const std::string t = title && title->is_string() && !title->get<std::string>().empty() ? title->get<std::string>() : "Runs";
  std::vector<std::string> notes;
  notes.push_back("Times are wall clock per repetition after warm-up (median, min, max over the repetitions).");
  if (any_surrogate) notes.push_back(std::string(kSurrogate) + " " + kSurrogateNote);
  if (any_estimated) notes.push_back(kEstimatedNote);
  for (const auto& r : reasons.lines) notes.push_back(r);
  write_block(out, t, header, md_rows, std::move(csv_rows), "_No runs._\n\n", notes);
}

}  // namespace

std::string markdown_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                           const std::vector<bool>& right) {
  std::string s = "|";
  // One cell, escaped, appended in place: GCC 12 warns falsely (-Wrestrict) on " " + text + " |"
  // once this is inlined.
  auto cell = [&s](const std::string& text) {
    s += ' ';
    for (char c : text) {
      if (c == '|') s += "\\|";
      else if (c == '\n') s += ' ';
      else s += c;
    }
    s += " |";
  };
  for (const auto& h : header) cell(h);
  s += "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) s += (i < right.size() && right[i]) ? "---:|" : "---|";
  s += "\n";
  for (const auto& r : rows) {
    s += "|";
    for (std::size_t i = 0; i < header.size(); ++i) cell(i < r.size() ? r[i] : std::string());
    s += "\n";
  }
  return s;
}

namespace {

// The runs some table shows: every run for the default table, else those a table selects.
std::vector<const ojson*> shown_runs(const ojson& results, const std::vector<ojson>& tables) {
  std::vector<const ojson*> all;
  for (const auto& r : results["runs"]) all.push_back(&r);
  if (tables.empty()) return all;
  std::set<const ojson*> picked;
  for (const auto& t : tables)
    for (const ojson* r : select_runs(all, t["columns"])) picked.insert(r);
  std::vector<const ojson*> out;
  for (const ojson* r : all)
    if (picked.count(r)) out.push_back(r);
  return out;
}

}  // namespace

RenderedTables render_tables(const ojson& results, const std::vector<ojson>& tables, const std::string& paper_dir,
                             const std::vector<PeerResults>& peers) {
  RenderedTables out;
  if (!results.contains("runs") || !results["runs"].is_array()) throw Error("results document has no runs[]");
  const Origins origins(results, shown_runs(results, tables));
  if (tables.empty()) render_default(results, origins, out);
  for (const auto& t : tables) render_one(results, t, paper_dir, peers, origins, out);
  out.origins = origins.list();
  return out;
}

namespace {

// The config's path in the repository at `root`: as the runner recorded it, else (files written
// before it did) the given path read from the repository's top.
std::string config_in_repository(const ojson& results, const std::string& given, const std::string& root) {
  if (const ojson* rel = find_path(results, "experiment.config_repo_path"))
    return rel->is_string() ? rel->get<std::string>() : "";
  const fs::path p(given);
  return path_in_repository(p.is_absolute() ? given : (fs::path(root) / p).string(), root);
}

// "; config configs/x.json", or "; config: PATH (not in the repository)" for a config a reader of
// the repository cannot find there; "" when the results name none.
std::string config_text(const ojson& results, const std::string& repo_root) {
  const ojson* given = find_path(results, "experiment.config_path");
  if (!given || !given->is_string()) return "";
  const std::string root = repo_root.empty() ? std::string(build_info::kSourceDir) : repo_root;
  const std::string path = given->get<std::string>();
  const std::string rel = config_in_repository(results, path, root);
  std::error_code ec;
  if (!rel.empty() && fs::is_regular_file(fs::path(root) / rel, ec)) return "; config " + rel;
  return "; config: " + path + " (not in the repository)";
}

std::string time_span(const RunOrigin& o) {
  return o.first_utc == o.last_utc ? o.first_utc : o.first_utc + " to " + o.last_utc;
}

std::string origin_text(const RunOrigin& o) {
  if (!o.unrecorded.empty()) return o.unrecorded;
  return "gpudm " + o.commit + " on " + o.machine + (o.host.empty() ? "" : ", host " + o.host) + "; " + time_span(o);
}

std::string counted(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// "Measured on ...; gpudm ...; ...; config ...." when the runs share one origin; else a line
// counting the commits and machines, then one tagged line per origin.
std::string measured_header(const std::vector<RunOrigin>& origins, const std::string& tail) {
  if (origins.size() == 1 && origins[0].unrecorded.empty()) {
    const RunOrigin& o = origins[0];
    return "Measured on " + o.machine + "; gpudm " + o.commit + "; " + time_span(o) + tail;
  }
  std::set<std::string> commits, machines;
  bool unrecorded = false;
  for (const auto& o : origins) {
    unrecorded = unrecorded || !o.unrecorded.empty();
    if (!o.unrecorded.empty()) continue;
    commits.insert(o.commit);
    machines.insert(o.machine + "\n" + o.host);
  }
  std::string m = commits.empty() ? "Measured by several invocations; the runs did not record which"
                                   : "Measured at " + counted(commits.size(), "commit") + " on " + counted(machines.size(), "machine");
  if (unrecorded && !commits.empty()) m += ", and by runs that did not record theirs";
  if (origins.size() > 1) m += "; each row's first cell is tagged with its runs' origin";
  m += tail;
  for (const auto& o : origins) m += "- " + (o.tag.empty() ? std::string() : "[" + o.tag + "] ") + origin_text(o) + "\n";
  return m + "\n";
}

}  // namespace

std::string render_experiment_markdown(const ojson& results, const RenderedTables& tables, const std::string& repo_root) {
  std::string m;
  const ojson* id = find_path(results, "experiment.id");
  const ojson* title = find_path(results, "experiment.title");
  const ojson* paper = find_path(results, "experiment.paper");
  m += "# " + (title && title->is_string() && !title->get<std::string>().empty() ? title->get<std::string>()
                                                                               : (id ? scalar_text(*id) : "Experiment")) +
       "\n\n";
  if (paper && paper->is_string() && !paper->get<std::string>().empty()) m += "Paper: " + paper->get<std::string>() + "\n\n";
  const std::string tail = config_text(results, repo_root) +
                           (truthy(find_path(results, "experiment.smoke")) ? " (--smoke)" : "") + ".\n\n";
  m += measured_header(tables.origins.empty() ? Origins(results, {}).list() : tables.origins, tail);
  m += tables.markdown;
  return m;
}

}  // namespace gpudm::experiments
