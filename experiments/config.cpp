#include "experiments/config.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "algorithms/core/json_limits.hpp"
#include "datasets/sha256.hpp"
#include "datasets/user_file.hpp"
#include "experiments/text.hpp"

namespace gpudm::experiments {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// identity

namespace {
nlohmann::json canonical(const ojson& j) { return nlohmann::json::parse(j.dump()); }  // sorted keys
}  // namespace

std::string run_identity(const std::string& family, const std::string& backend, const std::string& dataset,
                         const ojson& dataset_options, const ojson& params, std::uint64_t seed) {
  nlohmann::json id = nlohmann::json::array();
  id.push_back(family);
  id.push_back(backend);
  id.push_back(dataset);
  id.push_back(dataset_options.is_null() ? nlohmann::json::object() : canonical(dataset_options));
  id.push_back(params.is_null() ? nlohmann::json::object() : canonical(params));
  id.push_back(seed);
  return id.dump();
}

std::string run_identity(const RunSpec& r) {
  return run_identity(r.family, r.backend, r.dataset.name, r.dataset.options, r.params, r.seed);
}

std::string run_identity_of_record(const ojson& rec) {
  if (!rec.is_object()) return "";
  const ojson* fam = find_path(rec, "family");
  const ojson* be = find_path(rec, "backend");
  const ojson* name = find_path(rec, "dataset.name");
  const ojson* seed = find_path(rec, "seed");
  if (!fam || !be || !name || !seed || !fam->is_string() || !be->is_string() || !name->is_string() ||
      !seed->is_number_unsigned())
    return "";
  const ojson* opts = find_path(rec, "dataset.options");
  const ojson* params = find_path(rec, "params");
  return run_identity(fam->get<std::string>(), be->get<std::string>(), name->get<std::string>(),
                      opts ? *opts : ojson::object(), params ? *params : ojson::object(), seed->get<std::uint64_t>());
}

std::size_t ExperimentPlan::total_runs() const {
  std::size_t n = runs.size();
  for (const auto& p : included) n += p.total_runs();
  return n;
}

// ---------------------------------------------------------------------------------------------
// parsing

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
    // nlohmann: "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..."
    const std::string what = e.what();
    static const std::regex re(R"(at line (\d+), column (\d+): (.*)$)");
    std::smatch m;
    if (std::regex_search(what, m, re))
      throw ConfigError(source + ":" + m[1].str() + ":" + m[2].str() + ": " + one_line(m[3].str()));
    // Fall back to the byte offset.
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw ConfigError(source + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + one_line(what));
  } catch (const ojson::exception& e) {
    // A number beyond the double range ("1e999": out_of_range.406) carries no position.
    std::string what = e.what();
    if (const std::size_t b = what.find("] "); what.rfind("[json.exception.", 0) == 0 && b != std::string::npos)
      what = what.substr(b + 2);
    throw ConfigError(source + ": " + one_line(what));
  }
}

// ---------------------------------------------------------------------------------------------
// validation helpers

namespace {

const std::vector<std::string> kTopKeys = {"experiment", "title",    "paper", "comment", "include", "family",
                                           "backends",   "datasets", "params", "sweep", "cases",   "seeds",
                                           "warmup",     "repetitions", "smoke", "tables", "notes", "peers"};
const std::vector<std::string> kMetaKeys = {"experiment", "title", "paper", "comment", "include", "notes", "tables"};
const std::vector<std::string> kSmokeKeys = {"backends", "datasets", "params",      "sweep",
                                             "cases",    "seeds",    "warmup",      "repetitions"};
const std::vector<std::string> kDatasetKeys = {"name", "options"};
const std::vector<std::string> kPathDatasetKeys = {"path", "target", "task", "options"};
const std::vector<std::string> kCaseKeys = {"backend", "params", "comment"};
const std::vector<std::string> kTableKeys = {"title", "paper_csv", "rows", "columns", "notes", "comment", "all_paper_rows"};
const std::vector<std::string> kRowKeys = {"run", "paper", "label", "map"};
const std::vector<std::string> kColumnKeys = {"label", "select", "value", "scale", "format",
                                              "paper", "ratio",  "hidden", "comment", "peer"};
const std::vector<std::string> kPeerKeys = {"name", "file", "rows", "match", "comment"};
const std::vector<std::string> kColumnPeerKeys = {"name", "where"};

std::string type_name(const ojson& v) {
  switch (v.type()) {
    case ojson::value_t::null: return "null";
    case ojson::value_t::boolean: return "bool";
    case ojson::value_t::number_integer:
    case ojson::value_t::number_unsigned: return "int";
    case ojson::value_t::number_float: return "number";
    case ojson::value_t::string: return "string";
    case ojson::value_t::array: return "array";
    case ojson::value_t::object: return "object";
    default: return "value";
  }
}

std::string shown(const ojson& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

std::string join_path(const std::string& base, const std::string& key) { return base.empty() ? key : base + "." + key; }
std::string index_path(const std::string& base, std::size_t i) { return base + "[" + std::to_string(i) + "]"; }

class Checker {
 public:
  explicit Checker(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
    throw ConfigError(file_ + ": " + (path.empty() ? "" : path + ": ") + msg);
  }

  void keys(const ojson& obj, const std::vector<std::string>& allowed, const std::string& path) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
        fail(path, "unknown key '" + it.key() + "'" + suggest(it.key(), allowed));
    }
  }

  void expect(const ojson& v, ojson::value_t t, const std::string& path) const {
    const bool ok = v.type() == t || (t == ojson::value_t::number_float && v.is_number()) ||
                    (t == ojson::value_t::number_integer && v.is_number_integer());
    if (!ok) fail(path, "expected " + type_name(ojson(t)) + ", got " + type_name(v) + " " + shown(v));
  }
  std::string string(const ojson& v, const std::string& path) const {
    if (!v.is_string()) fail(path, "expected string, got " + type_name(v) + " " + shown(v));
    return v.get<std::string>();
  }
  void object(const ojson& v, const std::string& path) const {
    if (!v.is_object()) fail(path, "expected object, got " + type_name(v) + " " + shown(v));
  }
  void array(const ojson& v, const std::string& path, bool non_empty = true) const {
    if (!v.is_array()) fail(path, "expected array, got " + type_name(v) + " " + shown(v));
    if (non_empty && v.empty()) fail(path, "expected a non-empty array");
  }
  // An int in [min, max]; anything else (a float, a value beyond 64 bits) names the key.
  long long integer(const ojson& v, const std::string& path, long long min, long long max = LLONG_MAX) const {
    if (!v.is_number_integer()) fail(path, "expected int, got " + type_name(v) + " " + shown(v));
    const bool too_big = v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max);
    if (too_big || v.get<long long>() < min || v.get<long long>() > max) {
      const std::string range = max == LLONG_MAX ? ">= " + std::to_string(min)
                                                 : "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
      fail(path, "expected an int " + range + ", got " + v.dump());
    }
    return v.get<long long>();
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

// ---- family params ----

bool is_literal_wrapper(const ojson& v) { return v.is_object() && v.size() == 1 && v.contains("value"); }

struct Axis {
  std::string name;
  std::vector<ojson> values;
};

struct ParamBlock {
  ojson fixed = ojson::object();
  std::vector<Axis> axes;
};

class FamilyParams {
 public:
  FamilyParams(const Family& f) : specs_(f.params()) {
    for (const auto& s : specs_) names_.push_back(s.name);
  }
  const ParamSpec* find(const std::string& name) const {
    for (const auto& s : specs_)
      if (s.name == name) return &s;
    return nullptr;
  }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<ParamSpec>& specs() const { return specs_; }

  const ParamSpec& require(const Checker& c, const std::string& family, const std::string& name,
                           const std::string& path) const {
    const ParamSpec* s = find(name);
    if (!s) c.fail(path, "unknown param '" + name + "' of family '" + family + "'" + suggest(name, names_));
    return *s;
  }

  // A concrete value (never an axis): literal wrappers are unwrapped.
  ojson value(const Checker& c, const ParamSpec& s, const ojson& raw, const std::string& path) const {
    const ojson v = is_literal_wrapper(raw) ? raw["value"] : raw;
    if (!param_type_ok(s.type, v))
      c.fail(path, "param '" + s.name + "' expects " + s.type + ", got " + type_name(v) + " " + shown(v) +
                       (v.is_array() && !is_literal_wrapper(raw) ? " (an array inside an axis; write {\"value\": [...]})" : ""));
    // Ranges and allowed values, before anything under results/ is touched.
    if (const std::string why = s.check(nlohmann::json(v)); !why.empty()) c.fail(path, "param '" + s.name + "' " + why);
    return v;
  }

  // Reads a "params" object: arrays are axes, {"value": x} and scalars are fixed values.
  ParamBlock block(const Checker& c, const std::string& family, const ojson& params, const std::string& path) const {
    c.object(params, path);
    ParamBlock b;
    for (auto it = params.begin(); it != params.end(); ++it) {
      const std::string p = join_path(path, it.key());
      const ParamSpec& s = require(c, family, it.key(), p);
      if (it.value().is_array()) {
        b.axes.push_back(axis(c, s, it.value(), p));
      } else {
        b.fixed[it.key()] = value(c, s, it.value(), p);
      }
    }
    return b;
  }

  Axis axis(const Checker& c, const ParamSpec& s, const ojson& values, const std::string& path) const {
    c.array(values, path);
    Axis a{s.name, {}};
    for (std::size_t i = 0; i < values.size(); ++i) a.values.push_back(value(c, s, values[i], index_path(path, i)));
    return a;
  }

 private:
  std::vector<ParamSpec> specs_;
  std::vector<std::string> names_;
};

// Cartesian product of axes, first axis outermost.
std::vector<ojson> product(const std::vector<Axis>& axes) {
  std::vector<ojson> points{ojson::object()};
  for (const auto& a : axes) {
    std::vector<ojson> next;
    for (const auto& p : points)
      for (const auto& v : a.values) {
        ojson q = p;
        q[a.name] = v;
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  return points;
}

// ---- tables ----

class PaperCsvCache {
 public:
  explicit PaperCsvCache(std::string dir) : dir_(std::move(dir)) {}
  const std::vector<std::string>* header(const std::string& name) {
    auto it = headers_.find(name);
    if (it != headers_.end()) return &it->second;
    const fs::path p = fs::path(dir_) / name;
    if (!fs::exists(p)) return nullptr;
    auto rows = parse_csv(read_text_file(p.string()), p.string());
    if (rows.empty()) throw ConfigError(p.string() + ": empty paper table");
    return &(headers_[name] = rows.front());
  }
  std::vector<std::string> list() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec))
      if (e.path().extension() == ".csv") out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::map<std::string, std::vector<std::string>> headers_;
};

// ---- peers ----

// The config's "peers": [{"name", "file" (relative to the config), "rows" (dotted path to the
// file's array of rows; default "runs"; "" = the file is the array), "match" {peer key: run path}}].
std::vector<PeerResults> load_peers(const Checker& c, const ojson& spec, const fs::path& config_dir) {
  std::vector<PeerResults> out;
  c.array(spec, "peers");
  for (std::size_t i = 0; i < spec.size(); ++i) {
    const std::string p = index_path("peers", i);
    const ojson& e = spec[i];
    c.object(e, p);
    c.keys(e, kPeerKeys, p);
    for (const char* k : {"name", "file", "match"})
      if (!e.contains(k)) c.fail(p, std::string("missing key '") + k + "'");
    PeerResults peer;
    peer.name = c.string(e["name"], join_path(p, "name"));
    static const std::regex name_re("[A-Za-z0-9_]+");
    if (!std::regex_match(peer.name, name_re)) c.fail(join_path(p, "name"), "a peer name is letters, digits and '_'");
    for (const auto& other : out)
      if (other.name == peer.name) c.fail(join_path(p, "name"), "duplicate peer name '" + peer.name + "'");
    peer.file = c.string(e["file"], join_path(p, "file"));
    c.object(e["match"], join_path(p, "match"));
    if (e["match"].empty()) c.fail(join_path(p, "match"), "name at least one {peer key: run path} pair to join on");
    for (auto it = e["match"].begin(); it != e["match"].end(); ++it) c.string(it.value(), join_path(join_path(p, "match"), it.key()));
    peer.match = e["match"];
    const std::string rows_path = e.contains("rows") ? c.string(e["rows"], join_path(p, "rows")) : std::string("runs");
    const fs::path file = config_dir / peer.file;
    if (!fs::is_regular_file(file)) c.fail(join_path(p, "file"), "peer results file not found: " + file.string());
    std::string text;
    try {
      text = read_capped_file(file.string(), kMaxModelBytes, "peer results file");
    } catch (const Error& ex) {
      c.fail(join_path(p, "file"), ex.what());
    }
    if (const std::string deep = json_depth_error(text, file.string()); !deep.empty()) c.fail(join_path(p, "file"), deep);
    ojson doc;
    try {
      doc = ojson::parse(text);
    } catch (const nlohmann::json::exception& ex) {
      c.fail(join_path(p, "file"), file.string() + " is not valid JSON: " + one_line(ex.what()));
    }
    const ojson* rows = rows_path.empty() ? &doc : find_path(doc, rows_path);
    if (!rows || !rows->is_array())
      c.fail(join_path(p, "rows"), file.string() + " has no array at '" + rows_path + "'");
    for (const auto& r : *rows)
      if (r.is_object()) peer.rows.push_back(r);
    out.push_back(std::move(peer));
  }
  return out;
}

void check_column_peer(const Checker& c, const ojson& v, const std::string& p, const std::vector<PeerResults>& peers) {
  std::vector<std::string> names;
  for (const auto& peer : peers) names.push_back(peer.name);
  std::string name;
  if (v.is_string()) {
    name = v.get<std::string>();
  } else {
    c.object(v, p);
    c.keys(v, kColumnPeerKeys, p);
    if (!v.contains("name")) c.fail(p, "missing key 'name' (a peer of the config's \"peers\")");
    name = c.string(v["name"], join_path(p, "name"));
    if (v.contains("where")) {
      c.object(v["where"], join_path(p, "where"));
      for (auto it = v["where"].begin(); it != v["where"].end(); ++it)
        if (it.value().is_structured())
          c.fail(join_path(join_path(p, "where"), it.key()), "expected a scalar to match, got " + type_name(it.value()));
    }
  }
  if (std::find(names.begin(), names.end(), name) == names.end())
    c.fail(p, "no peer named '" + name + "' in the config's \"peers\"" + suggest(name, names));
}

void check_table(const Checker& c, const ojson& t, const std::string& path, PaperCsvCache& papers,
                 const std::vector<PeerResults>& peers) {
  c.object(t, path);
  c.keys(t, kTableKeys, path);
  if (t.contains("title")) c.string(t["title"], join_path(path, "title"));
  if (t.contains("all_paper_rows")) c.expect(t["all_paper_rows"], ojson::value_t::boolean, join_path(path, "all_paper_rows"));
  const std::vector<std::string>* header = nullptr;
  if (t.contains("paper_csv")) {
    const std::string name = c.string(t["paper_csv"], join_path(path, "paper_csv"));
    header = papers.header(name);
    if (!header)
      c.fail(join_path(path, "paper_csv"), "paper table '" + name + "' not found in " + papers.dir() + suggest(name, papers.list()));
  }
  auto check_paper_col = [&](const ojson& v, const std::string& p) {
    const std::string col = c.string(v, p);
    if (!header) c.fail(p, "'paper' needs the table's 'paper_csv'");
    if (std::find(header->begin(), header->end(), col) == header->end())
      c.fail(p, "column '" + col + "' not in " + t["paper_csv"].get<std::string>() + suggest(col, *header));
  };
  if (!t.contains("rows")) c.fail(path, "missing key 'rows'");
  if (!t.contains("columns")) c.fail(path, "missing key 'columns'");
  const std::string rows_path = join_path(path, "rows");
  c.array(t["rows"], rows_path);
  for (std::size_t i = 0; i < t["rows"].size(); ++i) {
    const ojson& r = t["rows"][i];
    const std::string p = index_path(rows_path, i);
    c.object(r, p);
    c.keys(r, kRowKeys, p);
    if (!r.contains("run")) c.fail(p, "missing key 'run' (a dotted path into a run, e.g. dataset.name)");
    c.string(r["run"], join_path(p, "run"));
    // A row's paper column only matters with a paper_csv (a table may share row specs with one).
    if (r.contains("paper") && header) check_paper_col(r["paper"], join_path(p, "paper"));
    else if (r.contains("paper")) c.string(r["paper"], join_path(p, "paper"));
    if (r.contains("label")) c.string(r["label"], join_path(p, "label"));
    if (r.contains("map")) {
      c.object(r["map"], join_path(p, "map"));
      for (auto it = r["map"].begin(); it != r["map"].end(); ++it)
        if (!it.value().is_string() && !it.value().is_number())
          c.fail(join_path(join_path(p, "map"), it.key()), "expected string or number, got " + type_name(it.value()));
    }
  }
  const std::string cols_path = join_path(path, "columns");
  c.array(t["columns"], cols_path);
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < t["columns"].size(); ++i) {
    const ojson& col = t["columns"][i];
    const std::string p = index_path(cols_path, i);
    c.object(col, p);
    c.keys(col, kColumnKeys, p);
    if (!col.contains("label")) c.fail(p, "missing key 'label'");
    const std::string label = c.string(col["label"], join_path(p, "label"));
    if (std::find(labels.begin(), labels.end(), label) != labels.end()) c.fail(join_path(p, "label"), "duplicate column label '" + label + "'");
    labels.push_back(label);
    const bool has_value = col.contains("value"), has_ratio = col.contains("ratio");
    const bool paper_only = !has_value && !has_ratio && col.contains("paper");  // the paper's number alone
    if (has_value == has_ratio && !paper_only)
      c.fail(p, "a column needs exactly one of 'value' (a dotted path) or 'ratio' ([numerator, denominator] labels), or only 'paper'");
    if (paper_only && col.contains("select")) c.fail(p, "a paper-only column shows no runs; remove 'select'");
    if (has_value) {
      const std::string value = c.string(col["value"], join_path(p, "value"));
      const bool reads_peer = value.rfind("peer.", 0) == 0 || value.find("{peer.") != std::string::npos;
      if (reads_peer && !col.contains("peer"))
        c.fail(join_path(p, "value"), "'" + value + "' reads a peer row: name the peer with \"peer\"");
    }
    if (col.contains("peer")) {
      if (!has_value) c.fail(p, "'peer' joins a peer row to a value column; a ratio column takes none");
      check_column_peer(c, col["peer"], join_path(p, "peer"), peers);
    }
    if (col.contains("select")) {
      c.object(col["select"], join_path(p, "select"));
      for (auto it = col["select"].begin(); it != col["select"].end(); ++it)
        if (it.value().is_object() || it.value().is_array())
          c.fail(join_path(join_path(p, "select"), it.key()), "expected a scalar to match, got " + type_name(it.value()));
    }
    if (has_ratio && col.contains("select")) c.fail(p, "a ratio column takes its runs from the two columns it divides; remove 'select'");
    if (col.contains("scale")) c.expect(col["scale"], ojson::value_t::number_float, join_path(p, "scale"));
    if (col.contains("format")) {
      const std::string f = c.string(col["format"], join_path(p, "format"));
      if (!valid_format(f)) c.fail(join_path(p, "format"), "unknown number format '" + f + "' (use e.g. .2f, .3g, .1e, d, .1%, ,d)");
    }
    if (col.contains("hidden")) c.expect(col["hidden"], ojson::value_t::boolean, join_path(p, "hidden"));
    if (col.contains("paper")) check_paper_col(col["paper"], join_path(p, "paper"));
  }
  // Ratio operands must name other columns (checked after all labels are known).
  for (std::size_t i = 0; i < t["columns"].size(); ++i) {
    const ojson& col = t["columns"][i];
    if (!col.contains("ratio")) continue;
    const std::string p = join_path(index_path(cols_path, i), "ratio");
    c.array(col["ratio"], p);
    if (col["ratio"].size() != 2) c.fail(p, "expected [numerator label, denominator label]");
    for (std::size_t k = 0; k < 2; ++k) {
      const std::string l = c.string(col["ratio"][k], index_path(p, k));
      if (l == col["label"].get<std::string>()) c.fail(index_path(p, k), "a ratio cannot refer to its own column");
      if (std::find(labels.begin(), labels.end(), l) == labels.end())
        c.fail(index_path(p, k), "no column labelled '" + l + "'" + suggest(l, labels));
      for (const auto& other : t["columns"])
        if (other["label"] == l && other.contains("ratio"))
          c.fail(index_path(p, k), "column '" + l + "' is itself a ratio; ratios take value columns");
    }
  }
  if (t.contains("notes")) {
    c.array(t["notes"], join_path(path, "notes"), false);
    for (std::size_t i = 0; i < t["notes"].size(); ++i) c.string(t["notes"][i], index_path(join_path(path, "notes"), i));
  }
}

// A data file of the user's: {"path": ..., "target": ..., "task": ..., "options": {...}}. The
// path is relative to the config's folder; the run's dataset name is that path as seen from the
// working directory, its options the rest (both part of the run's identity).
DatasetRef user_file(const Checker& c, const ojson& d, const std::string& p, const fs::path& config_dir) {
  c.keys(d, kPathDatasetKeys, p);
  const std::string rel = c.string(d["path"], join_path(p, "path"));
  if (rel.empty()) c.fail(join_path(p, "path"), "expected a file path");
  fs::path file(rel);
  if (file.is_relative()) file = config_dir / file;
  std::string name = file.lexically_normal().string();
  // A name with a '/' is never a catalog name (datasets/user_file.hpp).
  if (name.find('/') == std::string::npos) name = "./" + name;
  if (!fs::is_regular_file(name)) c.fail(join_path(p, "path"), "data file not found: " + name);
  DatasetRef ref;
  ref.name = name;
  if (d.contains("options")) {
    c.object(d["options"], join_path(p, "options"));
    ref.options = d["options"];
  }
  for (const char* k : {"target", "task"})
    if (d.contains(k)) {
      if (ref.options.contains(k)) c.fail(join_path(p, k), std::string("given twice (here and in options)"));
      ref.options[k] = d[k];
    }
  try {
    datasets::check_user_file_options(nlohmann::json::parse(ref.options.dump()), name);
  } catch (const Error& e) {
    c.fail(p, e.what());
  }
  return ref;
}

// ---- the loader ----

struct Loader {
  const ValidationContext& ctx;
  const PlanOptions& opt;
  PaperCsvCache papers;
  std::vector<fs::path> stack;        // canonical paths of the configs being loaded
  std::vector<std::string> stack_shown;
  std::set<std::string> dataset_names;  // every dataset the configs name (checks --only-dataset)

  bool dataset_wanted(const std::string& name) const {
    return opt.datasets.empty() || std::find(opt.datasets.begin(), opt.datasets.end(), name) != opt.datasets.end();
  }

  ExperimentPlan load(const fs::path& path, const std::string& shown_path);
  void expand_family(const Checker& c, const ojson& cfg, ExperimentPlan& plan);
};

ExperimentPlan Loader::load(const fs::path& path, const std::string& shown_path) {
  std::error_code ec;
  const fs::path canon = fs::weakly_canonical(path, ec);
  for (std::size_t i = 0; i < stack.size(); ++i) {
    if (stack[i] == canon) {
      std::string chain;
      for (std::size_t k = i; k < stack_shown.size(); ++k) chain += stack_shown[k] + " -> ";
      throw ConfigError(stack_shown.back() + ": include cycle: " + chain + shown_path);
    }
  }
  if (!fs::is_regular_file(path)) throw ConfigError(shown_path + ": config file not found");
  std::string text;
  try {
    text = read_capped_file(path.string(), kMaxConfigBytes, "config");
  } catch (const Error& e) {
    throw ConfigError(e.what());
  }
  ojson cfg = parse_json_text(text, shown_path);
  Checker c(shown_path);
  if (!cfg.is_object()) c.fail("", "a config is a JSON object, got " + type_name(cfg));
  c.keys(cfg, kTopKeys, "");

  ExperimentPlan plan;
  plan.config_path = shown_path;
  plan.config_sha256 = datasets::sha256_hex(text);
  plan.smoke = opt.smoke;
  plan.id = path.stem().string();
  if (cfg.contains("experiment")) {
    plan.id = c.string(cfg["experiment"], "experiment");
    static const std::regex id_re("[A-Za-z0-9_.-]+");
    if (!std::regex_match(plan.id, id_re)) c.fail("experiment", "an experiment id names files: use letters, digits, '_', '-', '.'");
  }
  if (cfg.contains("title")) plan.title = c.string(cfg["title"], "title");
  if (cfg.contains("paper")) plan.paper = c.string(cfg["paper"], "paper");
  if (cfg.contains("comment") && !cfg["comment"].is_string() && !cfg["comment"].is_array())
    c.fail("comment", "expected string or array of strings");
  if (cfg.contains("notes")) {
    c.array(cfg["notes"], "notes", false);
    for (std::size_t i = 0; i < cfg["notes"].size(); ++i) plan.notes.push_back(c.string(cfg["notes"][i], index_path("notes", i)));
  }

  stack.push_back(canon);
  stack_shown.push_back(shown_path);
  if (cfg.contains("include")) {
    ojson inc = cfg["include"];
    if (inc.is_string()) inc = ojson::array({inc});
    c.array(inc, "include");
    for (std::size_t i = 0; i < inc.size(); ++i) {
      const std::string rel = c.string(inc[i], index_path("include", i));
      const fs::path target = path.parent_path() / rel;
      const std::string target_shown = (fs::path(shown_path).parent_path() / rel).lexically_normal().string();
      std::error_code ec2;
      const fs::path tcanon = fs::weakly_canonical(target, ec2);
      bool cyclic = false;
      for (const auto& s : stack) cyclic = cyclic || s == tcanon;
      if (!cyclic && !fs::is_regular_file(target))
        c.fail(index_path("include", i), "included file not found: " + target_shown);
      plan.included.push_back(load(target, target_shown));
    }
  }
  stack.pop_back();
  stack_shown.pop_back();

  if (cfg.contains("peers")) plan.peers = load_peers(c, cfg["peers"], path.parent_path());
  if (cfg.contains("tables")) {
    c.array(cfg["tables"], "tables", false);
    for (std::size_t i = 0; i < cfg["tables"].size(); ++i) {
      check_table(c, cfg["tables"][i], index_path("tables", i), papers, plan.peers);
      plan.tables.push_back(cfg["tables"][i]);
    }
  }

  if (!cfg.contains("family")) {
    for (auto it = cfg.begin(); it != cfg.end(); ++it)
      if (std::find(kMetaKeys.begin(), kMetaKeys.end(), it.key()) == kMetaKeys.end())
        c.fail(it.key(), "'" + it.key() + "' needs 'family' (a config without a family only includes others)");
    if (!cfg.contains("include")) c.fail("", "a config needs 'family' (runs) or 'include' (a composite)");
    return plan;
  }
  plan.family = c.string(cfg["family"], "family");
  if (!ctx.families || !ctx.families->find(plan.family)) {
    const auto names = ctx.families ? ctx.families->names() : std::vector<std::string>{};
    c.fail("family", "unknown family '" + plan.family + "'" +
                         (names.empty() ? " (this build has no runnable family)" : suggest(plan.family, names)));
  }

  // Smoke block: the same keys as the top level; params and sweep merge key by key, the others
  // replace. The full config is always validated, so --smoke never hides an error.
  if (cfg.contains("smoke")) {
    c.object(cfg["smoke"], "smoke");
    c.keys(cfg["smoke"], kSmokeKeys, "smoke");
  }
  expand_family(c, cfg, plan);
  if (opt.smoke && cfg.contains("smoke")) {
    ojson eff = cfg;
    for (auto it = cfg["smoke"].begin(); it != cfg["smoke"].end(); ++it) {
      if ((it.key() == "params" || it.key() == "sweep") && it.value().is_object() && eff.contains(it.key()) &&
          eff[it.key()].is_object()) {
        for (auto kv = it.value().begin(); kv != it.value().end(); ++kv) eff[it.key()][kv.key()] = kv.value();
      } else {
        eff[it.key()] = it.value();
      }
    }
    plan.runs.clear();
    expand_family(Checker(shown_path + " (smoke)"), eff, plan);
  }
  return plan;
}

void Loader::expand_family(const Checker& c, const ojson& cfg, ExperimentPlan& plan) {
  const Family& family = *ctx.families->find(plan.family);
  const FamilyParams fp(family);

  // Backends known to the registry for this family (available or not).
  std::vector<std::string> known_backends;
  if (ctx.registry)
    for (const auto& b : ctx.registry->backends(plan.family)) known_backends.push_back(b.backend);
  if (known_backends.empty()) c.fail("family", "family '" + plan.family + "' has no registered backends");
  auto check_backend = [&](const std::string& b, const std::string& path) {
    if (std::find(known_backends.begin(), known_backends.end(), b) == known_backends.end())
      c.fail(path, "unknown backend '" + b + "' for family '" + plan.family + "'" + suggest(b, known_backends));
  };

  std::vector<std::string> backends = known_backends;
  bool backends_given = false;
  if (cfg.contains("backends")) {
    c.array(cfg["backends"], "backends");
    backends.clear();
    backends_given = true;
    for (std::size_t i = 0; i < cfg["backends"].size(); ++i) {
      const std::string b = c.string(cfg["backends"][i], index_path("backends", i));
      check_backend(b, index_path("backends", i));
      if (std::find(backends.begin(), backends.end(), b) != backends.end()) c.fail(index_path("backends", i), "duplicate backend '" + b + "'");
      backends.push_back(b);
    }
  }

  // Datasets. A family that needs no data (ceilings) omits them: its runs use kNoDataset.
  std::vector<DatasetRef> datasets;
  if (!cfg.contains("datasets")) datasets.push_back(DatasetRef{kNoDataset, ojson::object()});
  else c.array(cfg["datasets"], "datasets");
  for (std::size_t i = 0; cfg.contains("datasets") && i < cfg["datasets"].size(); ++i) {
    const ojson& d = cfg["datasets"][i];
    const std::string p = index_path("datasets", i);
    DatasetRef ref;
    if (d.is_string()) {
      ref.name = d.get<std::string>();
    } else if (d.is_object() && d.contains("path")) {
      ref = user_file(c, d, p, fs::path(plan.config_path).parent_path());
      datasets.push_back(std::move(ref));
      continue;
    } else if (d.is_object()) {
      c.keys(d, kDatasetKeys, p);
      if (!d.contains("name")) c.fail(p, "missing key 'name' (a catalog dataset) or 'path' (a data file)");
      ref.name = c.string(d["name"], join_path(p, "name"));
      if (d.contains("options")) {
        c.object(d["options"], join_path(p, "options"));
        ref.options = d["options"];
        if (ref.options.contains("rows")) c.integer(ref.options["rows"], join_path(p, "options.rows"), 1);
        if (ref.options.contains("seed")) c.integer(ref.options["seed"], join_path(p, "options.seed"), 0);
        for (auto it = ref.options.begin(); it != ref.options.end(); ++it)
          if (it.value().is_number_integer())
            c.integer(it.value(), join_path(p, "options." + it.key()), LLONG_MIN);  // no value beyond 64 bits
      }
    } else {
      c.fail(p, "expected a dataset name, {\"name\": ..., \"options\": {...}} or {\"path\": ..., \"target\": ...}, got " +
                    type_name(d));
    }
    if (ctx.check_dataset && ref.name != kNoDataset) {
      const std::string why = ctx.check_dataset(ref.name);
      if (!why.empty()) c.fail(d.is_object() ? join_path(p, "name") : p, why);
    }
    datasets.push_back(std::move(ref));
  }

  // Params, sweep, cases.
  ParamBlock top;
  if (cfg.contains("params")) top = fp.block(c, plan.family, cfg["params"], "params");
  std::vector<Axis> sweep;
  if (cfg.contains("sweep")) {
    c.object(cfg["sweep"], "sweep");
    for (auto it = cfg["sweep"].begin(); it != cfg["sweep"].end(); ++it) {
      const std::string p = join_path("sweep", it.key());
      const ParamSpec& s = fp.require(c, plan.family, it.key(), p);
      if (!it.value().is_array()) c.fail(p, "a sweep axis is an array of values, got " + type_name(it.value()));
      if (top.fixed.contains(it.key()))
        c.fail(p, "param '" + it.key() + "' is both fixed in 'params' and swept");
      sweep.push_back(fp.axis(c, s, it.value(), p));
    }
  }
  for (const auto& a : top.axes) {
    for (const auto& s : sweep)
      if (s.name == a.name) c.fail(join_path("params", a.name), "param '" + a.name + "' is an axis in both 'params' and 'sweep'");
    sweep.push_back(a);
  }
  auto is_top_axis = [&](const std::string& n) {
    for (const auto& a : sweep)
      if (a.name == n) return true;
    return false;
  };

  struct Case {
    std::string backend;
    ParamBlock params;
  };
  std::vector<Case> cases;
  if (cfg.contains("cases")) {
    c.array(cfg["cases"], "cases");
    for (std::size_t i = 0; i < cfg["cases"].size(); ++i) {
      const ojson& k = cfg["cases"][i];
      const std::string p = index_path("cases", i);
      c.object(k, p);
      c.keys(k, kCaseKeys, p);
      if (!k.contains("backend")) c.fail(p, "missing key 'backend'");
      Case cs;
      cs.backend = c.string(k["backend"], join_path(p, "backend"));
      check_backend(cs.backend, join_path(p, "backend"));
      if (k.contains("params")) cs.params = fp.block(c, plan.family, k["params"], join_path(p, "params"));
      for (auto it = cs.params.fixed.begin(); it != cs.params.fixed.end(); ++it)
        if (is_top_axis(it.key())) c.fail(join_path(p, "params." + it.key()), "param '" + it.key() + "' is already a sweep axis");
      for (const auto& a : cs.params.axes)
        if (is_top_axis(a.name)) c.fail(join_path(p, "params." + a.name), "param '" + a.name + "' is already a sweep axis");
      if (backends_given && std::find(backends.begin(), backends.end(), cs.backend) == backends.end()) continue;
      cases.push_back(std::move(cs));
    }
  } else {
    for (const auto& b : backends) cases.push_back(Case{b, {}});
  }

  // Seeds, warm-up, repetitions.
  std::vector<std::uint64_t> seeds{1};
  if (cfg.contains("seeds")) {
    c.array(cfg["seeds"], "seeds");
    seeds.clear();
    for (std::size_t i = 0; i < cfg["seeds"].size(); ++i)
      seeds.push_back(static_cast<std::uint64_t>(c.integer(cfg["seeds"][i], index_path("seeds", i), 0)));
  }
  int warmup = 1, repetitions = 5;
  if (cfg.contains("warmup")) warmup = static_cast<int>(c.integer(cfg["warmup"], "warmup", 0, kMaxWarmup));
  if (cfg.contains("repetitions"))
    repetitions = static_cast<int>(c.integer(cfg["repetitions"], "repetitions", 1, kMaxRepetitions));
  if (opt.repetitions > 0) repetitions = opt.repetitions;

  // Defaults in the family's order.
  ojson defaults = ojson::object();
  for (const auto& s : fp.specs()) defaults[s.name] = s.default_value;

  // The size of the expansion, computed from the axes before anything is expanded: a sweep of
  // millions of runs would take gigabytes just to list.
  {
    auto points = [](const std::vector<Axis>& axes) {
      double n = 1;
      for (const auto& a : axes) n *= static_cast<double>(a.values.size());
      return n;
    };
    double per_point = 0;
    for (const auto& cs : cases)
      if (opt.backends.empty() || std::find(opt.backends.begin(), opt.backends.end(), cs.backend) != opt.backends.end())
        per_point += points(cs.params.axes);
    double wanted = 0;
    for (const auto& ds : datasets) wanted += dataset_wanted(ds.name) ? 1 : 0;
    const double n = wanted * points(sweep) * per_point * static_cast<double>(seeds.size());
    if (!opt.allow_large_sweep && n > static_cast<double>(kMaxRuns))
      c.fail("", "the sweep expands to " + format_number(n, ",.0f") + " runs, more than the limit of " +
                     format_number(static_cast<double>(kMaxRuns), ",.0f") +
                     " per invocation; split the config or pass --allow-large-sweep");
  }

  std::set<std::string> seen;
  const auto sweep_points = product(sweep);
  for (const auto& ds : datasets) {
    dataset_names.insert(ds.name);
    if (!dataset_wanted(ds.name)) continue;
    for (const auto& sp : sweep_points) {
      for (const auto& cs : cases) {
        if (!opt.backends.empty() &&
            std::find(opt.backends.begin(), opt.backends.end(), cs.backend) == opt.backends.end())
          continue;
        for (const auto& cp : product(cs.params.axes)) {
          ojson params = defaults;
          for (auto it = top.fixed.begin(); it != top.fixed.end(); ++it) params[it.key()] = it.value();
          for (auto it = sp.begin(); it != sp.end(); ++it) params[it.key()] = it.value();
          for (auto it = cs.params.fixed.begin(); it != cs.params.fixed.end(); ++it) params[it.key()] = it.value();
          for (auto it = cp.begin(); it != cp.end(); ++it) params[it.key()] = it.value();
          for (const auto seed : seeds) {
            RunSpec r;
            r.family = plan.family;
            r.backend = cs.backend;
            r.dataset = ds;
            r.params = params;
            r.seed = seed;
            r.warmup = warmup;
            r.repetitions = repetitions;
            if (!seen.insert(run_identity(r)).second)
              c.fail("", "two runs are identical (backend '" + r.backend + "', dataset '" + ds.name + "', params " +
                             shown(params) + ", seed " + std::to_string(seed) + "): remove the duplicate case, dataset or axis value");
            plan.runs.push_back(std::move(r));
          }
        }
      }
    }
  }
}

void collect_backends(const ExperimentPlan& p, const Registry* reg, std::set<std::string>& out) {
  if (!p.family.empty() && reg)
    for (const auto& b : reg->backends(p.family)) out.insert(b.backend);
  for (const auto& i : p.included) collect_backends(i, reg, out);
}

void collect_run_datasets(const ExperimentPlan& p, std::set<std::string>& out) {
  for (const auto& r : p.runs) out.insert(r.dataset.name);
  for (const auto& i : p.included) collect_run_datasets(i, out);
}

}  // namespace

ExperimentPlan load_plan(const std::string& config_path, const ValidationContext& ctx, const PlanOptions& opt) {
  if (opt.repetitions == 0 || opt.repetitions < -1 || opt.repetitions > kMaxRepetitions)
    throw ConfigError("--repetitions must be in [1, " + std::to_string(kMaxRepetitions) + "]");
  Loader loader{ctx, opt, PaperCsvCache(ctx.paper_tables_dir), {}, {}, {}};
  ExperimentPlan plan = loader.load(fs::path(config_path), config_path);
  if (!opt.backends.empty()) {
    std::set<std::string> known;
    collect_backends(plan, ctx.registry, known);
    const std::vector<std::string> names(known.begin(), known.end());
    for (const auto& b : opt.backends)
      if (!known.count(b)) throw ConfigError("--backend " + b + ": no family in " + config_path + " has this backend" + suggest(b, names));
  }
  if (!opt.datasets.empty()) {
    // Checked against the runs that remain (under --smoke: the smoke block's datasets).
    std::set<std::string> used;
    collect_run_datasets(plan, used);
    const std::vector<std::string> names(loader.dataset_names.begin(), loader.dataset_names.end());
    for (const auto& d : opt.datasets)
      if (!used.count(d))
        throw ConfigError("--only-dataset " + d + ": no run of " + config_path + (opt.smoke ? " --smoke" : "") +
                          " uses a dataset of this name" +
                          (loader.dataset_names.count(d) ? std::string(" (it is only in the datasets that --smoke replaces)")
                                                         : suggest(d, names)));
  }
  if (!opt.allow_large_sweep && plan.total_runs() > kMaxRuns)
    throw ConfigError(config_path + ": the config and its includes expand to " + std::to_string(plan.total_runs()) +
                      " runs, more than the limit of " + std::to_string(kMaxRuns) +
                      " per invocation; split the config or pass --allow-large-sweep");
  return plan;
}

}  // namespace gpudm::experiments
