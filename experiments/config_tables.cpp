#include "experiments/config_tables.hpp"

#include <algorithm>
#include <regex>

#include "algorithms/core/json_limits.hpp"
#include "experiments/text.hpp"

namespace gpudm::experiments::config_detail {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kTableKeys = {"title", "paper_csv", "rows", "columns", "notes", "comment", "all_paper_rows"};
const std::vector<std::string> kRowKeys = {"run", "paper", "label", "map"};
const std::vector<std::string> kColumnKeys = {"label", "select", "value",   "scale",     "format",   "paper",
                                              "ratio", "product", "difference", "hidden", "comment", "peer", "divide_by", "aggregate"};
const std::vector<std::string> kPeerKeys = {"name", "file", "rows", "match", "comment"};
const std::vector<std::string> kColumnPeerKeys = {"name", "where"};

}  // namespace

const std::vector<std::string>* PaperCsvCache::header(const std::string& name) {
  auto it = headers_.find(name);
  if (it != headers_.end()) return &it->second;
  const fs::path p = fs::path(dir_) / name;
  if (!fs::exists(p)) return nullptr;
  auto rows = parse_csv(read_text_file(p.string()), p.string());
  if (rows.empty()) throw ConfigError(p.string() + ": empty paper table");
  return &(headers_[name] = rows.front());
}

std::vector<std::string> PaperCsvCache::list() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec))
    if (e.path().extension() == ".csv") out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

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

namespace {

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

// One table spec, checked in the order the messages promise: the table's own keys, its rows,
// its columns, then the ratios (which need every label), then the notes.
class TableChecker {
 public:
  TableChecker(const Checker& c, const ojson& t, const std::string& path, PaperCsvCache& papers,
               const std::vector<PeerResults>& peers)
      : c_(c), t_(t), path_(path), papers_(papers), peers_(peers) {}

  void check() {
    c_.object(t_, path_);
    c_.keys(t_, kTableKeys, path_);
    if (t_.contains("title")) c_.string(t_["title"], join_path(path_, "title"));
    if (t_.contains("all_paper_rows")) c_.expect(t_["all_paper_rows"], ojson::value_t::boolean, join_path(path_, "all_paper_rows"));
    if (t_.contains("paper_csv")) {
      const std::string name = c_.string(t_["paper_csv"], join_path(path_, "paper_csv"));
      header_ = papers_.header(name);
      if (!header_)
        c_.fail(join_path(path_, "paper_csv"), "paper table '" + name + "' not found in " + papers_.dir() + suggest(name, papers_.list()));
    }
    if (!t_.contains("rows")) c_.fail(path_, "missing key 'rows'");
    if (!t_.contains("columns")) c_.fail(path_, "missing key 'columns'");
    const std::string rows_path = join_path(path_, "rows");
    c_.array(t_["rows"], rows_path);
    for (std::size_t i = 0; i < t_["rows"].size(); ++i) check_row(t_["rows"][i], index_path(rows_path, i));
    const std::string cols_path = join_path(path_, "columns");
    c_.array(t_["columns"], cols_path);
    for (std::size_t i = 0; i < t_["columns"].size(); ++i) check_column(t_["columns"][i], index_path(cols_path, i));
    // Ratio and product operands must name other columns (checked after all labels are known).
    for (std::size_t i = 0; i < t_["columns"].size(); ++i) {
      for (const char* key : {"ratio", "product", "difference"})
        if (t_["columns"][i].contains(key)) check_operands(t_["columns"][i], key, join_path(index_path(cols_path, i), key));
    }
    if (t_.contains("notes")) {
      c_.array(t_["notes"], join_path(path_, "notes"), false);
      for (std::size_t i = 0; i < t_["notes"].size(); ++i) c_.string(t_["notes"][i], index_path(join_path(path_, "notes"), i));
    }
  }

 private:
  void check_paper_col(const ojson& v, const std::string& p) const {
    const std::string col = c_.string(v, p);
    if (!header_) c_.fail(p, "'paper' needs the table's 'paper_csv'");
    if (std::find(header_->begin(), header_->end(), col) == header_->end())
      c_.fail(p, "column '" + col + "' not in " + t_["paper_csv"].get<std::string>() + suggest(col, *header_));
  }

  void check_row(const ojson& r, const std::string& p) const {
    c_.object(r, p);
    c_.keys(r, kRowKeys, p);
    if (!r.contains("run")) c_.fail(p, "missing key 'run' (a dotted path into a run, e.g. dataset.name)");
    c_.string(r["run"], join_path(p, "run"));
    // A row's paper column only matters with a paper_csv (a table may share row specs with one).
    if (r.contains("paper") && header_) check_paper_col(r["paper"], join_path(p, "paper"));
    else if (r.contains("paper")) c_.string(r["paper"], join_path(p, "paper"));
    if (r.contains("label")) c_.string(r["label"], join_path(p, "label"));
    if (r.contains("map")) {
      c_.object(r["map"], join_path(p, "map"));
      for (auto it = r["map"].begin(); it != r["map"].end(); ++it)
        if (!it.value().is_string() && !it.value().is_number())
          c_.fail(join_path(join_path(p, "map"), it.key()), "expected string or number, got " + type_name(it.value()));
    }
  }

  void check_column(const ojson& col, const std::string& p) {
    c_.object(col, p);
    c_.keys(col, kColumnKeys, p);
    if (!col.contains("label")) c_.fail(p, "missing key 'label'");
    const std::string label = c_.string(col["label"], join_path(p, "label"));
    if (std::find(labels_.begin(), labels_.end(), label) != labels_.end())
      c_.fail(join_path(p, "label"), "duplicate column label '" + label + "'");
    labels_.push_back(label);
    const bool has_value = col.contains("value");
    const int computed = col.contains("ratio") + col.contains("product") + col.contains("difference");
    const bool has_ratio = computed > 0;  // computed from other columns
    const bool paper_only = !has_value && !has_ratio && col.contains("paper");  // the paper's number alone
    if ((has_value == has_ratio || computed > 1) && !paper_only)
      c_.fail(p, "a column needs exactly one of 'value' (a dotted path), 'ratio' ([numerator, denominator] labels), "
                 "'difference' ([minuend, subtrahend] labels) or 'product' ([ratio label, ratio label]), or only 'paper'");
    if (paper_only && col.contains("select")) c_.fail(p, "a paper-only column shows no runs; remove 'select'");
    if (has_value) {
      const std::string value = c_.string(col["value"], join_path(p, "value"));
      const bool reads_peer = value.rfind("peer.", 0) == 0 || value.find("{peer.") != std::string::npos;
      if (reads_peer && !col.contains("peer"))
        c_.fail(join_path(p, "value"), "'" + value + "' reads a peer row: name the peer with \"peer\"");
    }
    if (col.contains("divide_by")) {
      if (!has_value) c_.fail(p, "'divide_by' divides a value column's runs one by one; a ratio column takes none");
      c_.string(col["divide_by"], join_path(p, "divide_by"));
    }
    if (col.contains("aggregate")) {
      if (!has_value) c_.fail(p, "'aggregate' says how a value column combines its runs; a ratio column takes none");
      const std::string a = c_.string(col["aggregate"], join_path(p, "aggregate"));
      if (a != "median" && a != "mean") c_.fail(join_path(p, "aggregate"), "expected \"median\" or \"mean\", got \"" + a + "\"");
    }
    if (col.contains("peer")) {
      if (!has_value) c_.fail(p, "'peer' joins a peer row to a value column; a ratio column takes none");
      check_column_peer(c_, col["peer"], join_path(p, "peer"), peers_);
    }
    if (col.contains("select")) {
      c_.object(col["select"], join_path(p, "select"));
      for (auto it = col["select"].begin(); it != col["select"].end(); ++it)
        if (it.value().is_object() || it.value().is_array())
          c_.fail(join_path(join_path(p, "select"), it.key()), "expected a scalar to match, got " + type_name(it.value()));
    }
    if (has_ratio && col.contains("select")) c_.fail(p, "a ratio column takes its runs from the two columns it divides; remove 'select'");
    if (col.contains("scale")) c_.expect(col["scale"], ojson::value_t::number_float, join_path(p, "scale"));
    if (col.contains("format")) {
      const std::string f = c_.string(col["format"], join_path(p, "format"));
      if (!valid_format(f)) c_.fail(join_path(p, "format"), "unknown number format '" + f + "' (use e.g. .2f, .3g, .1e, d, .1%, ,d)");
    }
    if (col.contains("hidden")) c_.expect(col["hidden"], ojson::value_t::boolean, join_path(p, "hidden"));
    if (col.contains("paper")) check_paper_col(col["paper"], join_path(p, "paper"));
  }

  // A ratio divides two value columns; a product multiplies two ratio columns (a chained ratio,
  // e.g. MOA / ours on one machine times ours / GPU on another).
  // A difference subtracts two value columns (e.g. a call's time less its kernels': its fixed cost).
  void check_operands(const ojson& col, const char* key, const std::string& p) const {
    const bool product = std::string(key) == "product";
    c_.array(col[key], p);
    if (col[key].size() != 2)
      c_.fail(p, product ? "expected [ratio label, ratio label]"
                         : std::string(key) == "difference" ? "expected [minuend label, subtrahend label]"
                                                            : "expected [numerator label, denominator label]");
    for (std::size_t k = 0; k < 2; ++k) {
      const std::string l = c_.string(col[key][k], index_path(p, k));
      if (l == col["label"].get<std::string>()) c_.fail(index_path(p, k), std::string("a ") + key + " cannot refer to its own column");
      if (std::find(labels_.begin(), labels_.end(), l) == labels_.end())
        c_.fail(index_path(p, k), "no column labelled '" + l + "'" + suggest(l, labels_));
      bool is_ratio = false, computed = false;
      for (const auto& other : t_["columns"])
        if (other["label"] == l) {
          computed = other.contains("ratio") || other.contains("difference") || other.contains("product");
          is_ratio = other.contains("ratio");
        }
      if (!product && computed)
        c_.fail(index_path(p, k), "column '" + l + "' is itself computed; " + key + "s take value columns");
      if (product && !is_ratio) c_.fail(index_path(p, k), "column '" + l + "' is not a ratio; a product multiplies two ratio columns");
    }
  }

  const Checker& c_;
  const ojson& t_;
  const std::string& path_;
  PaperCsvCache& papers_;
  const std::vector<PeerResults>& peers_;
  const std::vector<std::string>* header_ = nullptr;
  std::vector<std::string> labels_;
};

}  // namespace

void check_table(const Checker& c, const ojson& t, const std::string& path, PaperCsvCache& papers,
                 const std::vector<PeerResults>& peers) {
  TableChecker(c, t, path, papers, peers).check();
}

}  // namespace gpudm::experiments::config_detail
