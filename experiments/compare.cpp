#include "experiments/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "experiments/config.hpp"
#include "experiments/tables.hpp"
#include "experiments/text.hpp"
#include "gpudm/build_info.hpp"

namespace gpudm::experiments {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// The U test

namespace {

// Counts of U = 0..m*n over the C(m+n, m) equally likely rank assignments without ties: the
// coefficients of the Gaussian binomial [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i).
// Both the product and the division are causal in the coefficient index, so truncating to
// degree m*n (the result's degree) is exact.
std::vector<double> u_distribution(std::size_t m, std::size_t n) {
  std::vector<double> c(m * n + 1, 0.0);
  c[0] = 1.0;
  for (std::size_t i = 1; i <= m; ++i) {
    for (std::size_t k = c.size(); k-- > n + i;) c[k] -= c[k - (n + i)];
    for (std::size_t k = i; k < c.size(); ++k) c[k] += c[k - i];
  }
  return c;
}

}  // namespace

UTest mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  UTest t;
  const std::size_t n1 = a.size(), n2 = b.size();
  if (n1 == 0 || n2 == 0) return t;
  std::vector<std::pair<double, std::size_t>> all;
  all.reserve(n1 + n2);
  for (std::size_t i = 0; i < n1; ++i) all.emplace_back(a[i], i);
  for (std::size_t i = 0; i < n2; ++i) all.emplace_back(b[i], n1 + i);
  std::sort(all.begin(), all.end());
  std::vector<double> rank(n1 + n2);
  double tie_term = 0.0;  // sum of t^3 - t over groups of t tied values
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j + 1 < all.size() && all[j + 1].first == all[i].first) ++j;
    const double r = 0.5 * static_cast<double>(i + j) + 1.0;
    for (std::size_t k = i; k <= j; ++k) rank[all[k].second] = r;
    const double tn = static_cast<double>(j - i + 1);
    tie_term += tn * tn * tn - tn;
    i = j + 1;
  }
  double r1 = 0.0;
  for (std::size_t i = 0; i < n1; ++i) r1 += rank[i];
  const double d1 = static_cast<double>(n1), d2 = static_cast<double>(n2), n = d1 + d2;
  t.u = r1 - d1 * (d1 + 1.0) / 2.0;
  const double u = std::max(t.u, d1 * d2 - t.u);  // the larger of U1, U2: the two-sided statistic
  if (tie_term == 0.0 && std::min(n1, n2) <= 8) {
    t.method = "exact";
    const auto c = u_distribution(n1, n2);
    double total = 0.0, upper = 0.0;
    for (std::size_t k = 0; k < c.size(); ++k) {
      total += c[k];
      if (static_cast<double>(k) >= u - 1e-9) upper += c[k];
    }
    t.pvalue = std::min(1.0, 2.0 * upper / total);
    return t;
  }
  t.method = "asymptotic";
  const double mu = d1 * d2 / 2.0;
  const double var = d1 * d2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
  if (var <= 0.0) {  // every value tied: nothing to tell apart
    t.pvalue = 1.0;
    return t;
  }
  const double z = (u - mu - 0.5) / std::sqrt(var);
  t.pvalue = std::clamp(std::erfc(z / std::sqrt(2.0)), 0.0, 1.0);
  return t;
}

double min_two_sided_pvalue(std::size_t n1, std::size_t n2) {
  if (n1 == 0 || n2 == 0) return 1.0;
  double c = 1.0;  // C(n1 + n2, n1), exact in doubles for the sizes that matter
  for (std::size_t i = 1; i <= std::min(n1, n2); ++i)
    c = c * static_cast<double>(n1 + n2 - std::min(n1, n2) + i) / static_cast<double>(i);
  return std::min(1.0, 2.0 / c);
}

int min_testable_repetitions(double alpha) {
  int n = 1;
  while (n < 1000 && min_two_sided_pvalue(static_cast<std::size_t>(n), static_cast<std::size_t>(n)) >= alpha) ++n;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Reading both sides

namespace {

struct Entry {
  ojson record;      // the results run (results files) or {"name": ...} (Google Benchmark)
  std::string key;   // matching key, filled once both sides are read
  std::string status = "ok";
  std::string reason;
  std::vector<double> samples;  // seconds
  std::map<std::string, double> metrics;
  bool device_clock = false;  // a breakdown phase timed on the device (CUDA events): a GPU-measured run
  bool estimated = false;     // metrics.estimated: a time scaled or replayed, not measured whole (perf_history does not gate it)
};

struct Side {
  std::string path;
  std::string kind;  // "results" | "google_benchmark"
  std::string experiment;
  std::string family;
  std::string config_path;
  ojson about = ojson::object();  // path, git_sha, utc_time, device
  std::vector<Entry> entries;
};

ojson read_json_file(const std::string& path) {
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const Error& e) {
    throw ConfigError(std::string("--compare: ") + e.what());
  }
  try {
    return parse_json_text(text, path);
  } catch (const Error& e) {
    throw ConfigError(std::string("--compare: ") + e.what());
  }
}

double to_seconds(double v, const std::string& unit) {
  if (unit == "ns") return v * 1e-9;
  if (unit == "us") return v * 1e-6;
  if (unit == "ms") return v * 1e-3;
  return v;
}

// A Google Benchmark rate that is a headline metric: items/bytes per second and user counters
// whose name is a rate ("GPops/s").
bool gbench_rate_key(const std::string& k) {
  return k == "items_per_second" || k == "bytes_per_second" || k.find("/s") != std::string::npos;
}

// A timing sample is a positive, finite number of seconds: zero or a negative time would read as
// infinitely "faster".
double positive_sample(double seconds, const std::string& path, const std::string& what) {
  if (!(seconds > 0.0) || !std::isfinite(seconds))
    throw ConfigError("--compare: " + path + ": " + what + " has a timing sample of " + std::to_string(seconds) +
                      " s (a sample must be a positive, finite time)");
  return seconds;
}

Side read_side(const std::string& path) {
  Side s;
  s.path = path;
  const ojson doc = read_json_file(path);
  s.about["path"] = path;
  if (doc.is_object() && doc.contains("benchmarks") && doc["benchmarks"].is_array()) {
    s.kind = "google_benchmark";
    if (const ojson* d = find_path(doc, "context.date")) s.about["utc_time"] = *d;
    if (const ojson* h = find_path(doc, "context.host_name")) s.about["host"] = *h;
    std::map<std::string, std::size_t> index;
    std::map<std::string, std::map<std::string, std::vector<double>>> rates;
    for (const auto& b : doc["benchmarks"]) {
      if (!b.is_object() || b.value("run_type", std::string("iteration")) != "iteration") continue;
      const std::string name = b.contains("run_name") ? b["run_name"].get<std::string>() : b.value("name", std::string());
      if (name.empty()) continue;
      auto it = index.find(name);
      if (it == index.end()) {
        it = index.emplace(name, s.entries.size()).first;
        Entry e;
        e.record = {{"name", name}};
        e.key = name;
        s.entries.push_back(std::move(e));
      }
      Entry& e = s.entries[it->second];
      if (b.value("error_occurred", false)) {
        const std::string msg = b.value("error_message", std::string("error"));
        e.status = msg.rfind("skipped", 0) == 0 ? "skipped" : "failed";
        e.reason = msg;
        continue;
      }
      if (!b.contains("real_time") || !b["real_time"].is_number()) continue;
      e.samples.push_back(positive_sample(to_seconds(b["real_time"].get<double>(), b.value("time_unit", std::string("ns"))), path, name));
      for (auto kv = b.begin(); kv != b.end(); ++kv)
        if (kv.value().is_number() && gbench_rate_key(kv.key())) rates[name][kv.key()].push_back(kv.value().get<double>());
    }
    for (auto& e : s.entries)
      for (auto& [k, v] : rates[e.key]) e.metrics[k] = median_of(v);
    return s;
  }
  if (!doc.is_object() || !doc.contains("runs") || !doc["runs"].is_array())
    throw ConfigError("--compare: " + path + " is neither a results file (no \"runs\") nor Google Benchmark JSON (no \"benchmarks\")");
  const ojson* ver = find_path(doc, "schema_version");
  if (!ver || !ver->is_number_integer() || ver->get<int>() != 1)
    throw ConfigError("--compare: " + path + ": schema_version " + (ver ? ver->dump() : std::string("missing")) +
                      " (this build reads schema 1)");
  s.kind = "results";
  if (const ojson* id = find_path(doc, "experiment.id"); id && id->is_string()) s.experiment = id->get<std::string>();
  if (const ojson* f = find_path(doc, "experiment.family"); f && f->is_string()) s.family = f->get<std::string>();
  if (const ojson* c = find_path(doc, "experiment.config_path"); c && c->is_string()) s.config_path = c->get<std::string>();
  if (const ojson* g = find_path(doc, "provenance.git_sha")) s.about["git_sha"] = *g;
  if (const ojson* g = find_path(doc, "provenance.git_dirty")) s.about["git_dirty"] = *g;
  if (const ojson* t = find_path(doc, "provenance.utc_time")) s.about["utc_time"] = *t;
  if (const ojson* d = find_path(doc, "environment.devices"); d && d->is_array() && !d->empty() && (*d)[0].contains("name"))
    s.about["device"] = (*d)[0]["name"];
  else if (const ojson* c = find_path(doc, "environment.cpu_model"))
    s.about["device"] = *c;
  for (const auto& r : doc["runs"]) {
    Entry e;
    e.record = r;
    e.status = r.value("status", std::string("ok"));
    e.reason = r.value("reason", std::string());
    if (const ojson* smp = find_path(r, "timing.samples"); smp && smp->is_array())
      for (const auto& v : *smp)
        if (v.is_number()) e.samples.push_back(positive_sample(v.get<double>(), path, "run " + std::to_string(s.entries.size() + 1)));
    if (const ojson* bd = find_path(r, "breakdown"); bd && bd->is_object())
      for (const auto& ph : *bd)
        e.device_clock = e.device_clock || (ph.is_object() && ph.value("clock", std::string()) == "device");
    if (const ojson* m = find_path(r, "metrics"); m && m->is_object())
      for (auto kv = m->begin(); kv != m->end(); ++kv)
        if (kv.value().is_number()) e.metrics[kv.key()] = kv.value().get<double>();
    if (const ojson* est = find_path(r, "metrics.estimated"); est && est->is_boolean()) e.estimated = est->get<bool>();
    s.entries.push_back(std::move(e));
  }
  return s;
}

// Params recorded by every run of both files (for --common-params).
std::set<std::string> common_param_keys(const Side& a, const Side& b) {
  std::set<std::string> keys;
  bool first = true;
  for (const Side* s : {&a, &b})
    for (const auto& e : s->entries) {
      std::set<std::string> k;
      if (const ojson* p = find_path(e.record, "params"); p && p->is_object())
        for (auto it = p->begin(); it != p->end(); ++it) k.insert(it.key());
      if (first) keys = k;
      else {
        std::set<std::string> both;
        std::set_intersection(keys.begin(), keys.end(), k.begin(), k.end(), std::inserter(both, both.end()));
        keys = std::move(both);
      }
      first = false;
    }
  return keys;
}

void assign_keys(Side& s, const std::set<std::string>* only_params) {
  for (auto& e : s.entries) {
    if (!only_params) {
      e.key = run_identity_of_record(e.record);
      continue;
    }
    ojson r = e.record;
    if (r.contains("params") && r["params"].is_object()) {
      ojson kept = ojson::object();
      for (auto it = r["params"].begin(); it != r["params"].end(); ++it)
        if (only_params->count(it.key())) kept[it.key()] = it.value();
      r["params"] = kept;
    }
    e.key = run_identity_of_record(r);
  }
}

// Headline metrics: the rates (metrics.*_per_s*) the config's tables show, in table order.
struct Metric {
  std::string key;
  std::string label;
};

// A rate: "x_per_s" or a qualified one, "x_per_s_kernel", "x_per_s_per_watt" (higher is better).
bool rate_key(const std::string& key) {
  const std::size_t p = key.find("_per_s");
  return p != std::string::npos && p > 0 && (p + 6 == key.size() || key[p + 6] == '_');
}

// "gpops_per_s" -> "GPops/s", "gpops_per_s_kernel" -> "GPops/s kernel", "instances_per_s" -> "instances/s".
std::string metric_label(const std::string& key) {
  static const std::map<std::string, std::string> known = {{"tree_instance_updates_per_s", "tree-instance updates/s"},
                                                           {"items_per_second", "items/s"},
                                                           {"bytes_per_second", "bytes/s"}};
  if (auto it = known.find(key); it != known.end()) return it->second;
  std::string s = key;
  if (const std::size_t p = s.find("_per_s"); p != std::string::npos) s = s.substr(0, p) + "/s" + s.substr(p + 6);
  if (s.rfind("gpops", 0) == 0) s = "GPops" + s.substr(5);
  std::replace(s.begin(), s.end(), '_', ' ');
  return s;
}

std::vector<Metric> headline_metrics(const Side& base, const Side& neu, std::string& source) {
  std::vector<Metric> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& k) {
    if (seen.insert(k).second) out.push_back({k, metric_label(k)});
  };
  if (base.kind == "google_benchmark") {
    // The cases' own rate counters ("GPops/s"); items/bytes per second only when there are none
    // (gpudm_bench's items/s repeats a counter).
    for (bool counters : {true, false}) {
      for (const Side* s : {&base, &neu})
        for (const auto& e : s->entries)
          for (const auto& [k, v] : e.metrics)
            if (counters == (k != "items_per_second" && k != "bytes_per_second")) add(k);
      if (!out.empty()) break;
    }
    source = "Google Benchmark rate counters";
    return out;
  }
  const std::string& cfg = !neu.config_path.empty() ? neu.config_path : base.config_path;
  std::string found;
  for (const fs::path& p : {fs::path(cfg), fs::path(build_info::kSourceDir) / cfg})
    if (!cfg.empty() && fs::is_regular_file(p)) {
      found = p.string();
      break;
    }
  if (!found.empty()) {
    try {
      const ojson c = parse_json_text(read_text_file(found), found);
      if (c.contains("tables") && c["tables"].is_array())
        for (const auto& t : c["tables"])
          for (const auto& col : t.value("columns", ojson::array())) {
            const std::string v = col.value("value", std::string());
            // "peer.X" values are another tool's numbers (config "peers"), never a headline of ours.
            if (v.rfind("metrics.", 0) == 0 && rate_key(v.substr(8))) add(v.substr(8));
          }
      source = cfg + " tables";
    } catch (const Error&) {
      found.clear();
    }
  }
  if (found.empty() || out.empty()) {
    // No config (or no rate in its tables): the schema's conventional rates, where the runs have them.
    for (const char* k : {"gpops_per_s", "instances_per_s"})
      for (const Side* s : {&base, &neu})
        for (const auto& e : s->entries)
          if (e.metrics.count(k)) add(k);
    source = found.empty() ? (cfg.empty() ? "no config named" : cfg + " not found") + std::string(": conventional gpops_per_s, instances_per_s")
                           : cfg + " tables name no rate: conventional gpops_per_s, instances_per_s";
  }
  return out;
}

std::string label_of(const Entry& e, const std::vector<std::string>& vary, bool options_vary, bool seed_varies) {
  if (!e.record.contains("backend")) return e.record.value("name", std::string("?"));
  std::string s = run_label(e.record, vary);
  if (options_vary)
    if (const ojson* o = find_path(e.record, "dataset.options"); o && o->is_object() && !o->empty()) {
      std::string t;
      for (auto it = o->begin(); it != o->end(); ++it) t += (t.empty() ? "" : ", ") + it.key() + "=" + scalar_text(it.value());
      s += " [" + t + "]";
    }
  if (seed_varies)
    if (const ojson* sd = find_path(e.record, "seed")) s += " seed " + scalar_text(*sd);
  return s;
}

ojson side_stats(const Entry& e) {
  ojson j;
  j["status"] = e.status;
  j["clock"] = e.device_clock ? "device" : "host";
  if (e.estimated) j["estimated"] = true;
  if (!e.reason.empty()) j["reason"] = e.reason;
  j["n"] = e.samples.size();
  if (!e.samples.empty()) {
    j["median"] = median_of(e.samples);
    j["min"] = *std::min_element(e.samples.begin(), e.samples.end());
    j["max"] = *std::max_element(e.samples.begin(), e.samples.end());
    j["samples"] = e.samples;
  }
  return j;
}

std::string percent(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f %%", 100.0 * x);
  return b;
}

// Runs of both files matched by key. A key twice in one file (possible only with
// --common-params, when a param one file lacks was swept) cannot be matched: such runs are
// counted, never guessed.
struct Matched {
  std::vector<std::pair<const Entry*, const Entry*>> pairs;
  std::size_t only_base = 0, only_new = 0, colliding = 0;
};

Matched match_entries(const Side& base, const Side& neu) {
  auto index_of = [](const Side& s, std::map<std::string, std::size_t>& idx, std::set<std::string>& dup) {
    for (std::size_t i = 0; i < s.entries.size(); ++i)
      if (!idx.emplace(s.entries[i].key, i).second) dup.insert(s.entries[i].key);
  };
  std::map<std::string, std::size_t> bi, ni;
  std::set<std::string> dup;
  index_of(base, bi, dup);
  index_of(neu, ni, dup);
  Matched m;
  for (const auto& e : base.entries) {
    if (e.key.empty()) continue;
    if (dup.count(e.key)) {
      ++m.colliding;
      continue;
    }
    auto it = ni.find(e.key);
    if (it == ni.end()) ++m.only_base;
    else m.pairs.emplace_back(&e, &neu.entries[it->second]);
  }
  for (const auto& e : neu.entries)
    if (!e.key.empty() && !dup.count(e.key) && !bi.count(e.key)) ++m.only_new;
  return m;
}

// What a matched run's label names: the params that vary (with --common-params, only those both
// files record), the dataset options and the seed where they vary.
struct Labels {
  std::vector<std::string> vary;
  bool options_vary = false, seed_varies = false;
  std::string of(const Entry& e) const { return label_of(e, vary, options_vary, seed_varies); }
};

Labels labels_of(const Matched& m, const CompareOptions& opt, const std::set<std::string>& keys) {
  std::vector<const ojson*> recs;
  std::set<std::string> options_seen, seeds_seen;
  for (const auto& [b, n] : m.pairs) {
    recs.push_back(&b->record);
    if (const ojson* o = find_path(b->record, "dataset.options")) options_seen.insert(o->dump());
    if (const ojson* sd = find_path(b->record, "seed")) seeds_seen.insert(sd->dump());
  }
  Labels l;
  l.vary = varying_params(recs);
  if (opt.common_params)
    l.vary.erase(std::remove_if(l.vary.begin(), l.vary.end(), [&](const std::string& k) { return !keys.count(k); }), l.vary.end());
  l.options_vary = options_seen.size() > 1;
  l.seed_varies = seeds_seen.size() > 1;
  return l;
}

// Matched ok runs with fewer than `min_reps` repetitions on a side are an input error.
void check_repetitions(const Matched& m, int min_reps, const CompareOptions& opt, const Labels& labels) {
  std::vector<std::size_t> few;  // positions in `pairs`
  for (std::size_t i = 0; i < m.pairs.size(); ++i) {
    const auto& [b, n] = m.pairs[i];
    if (b->status == "ok" && n->status == "ok" &&
        std::min(b->samples.size(), n->samples.size()) < static_cast<std::size_t>(min_reps))
      few.push_back(i);
  }
  if (few.empty()) return;
  const auto& [b, n] = m.pairs[few.front()];
  throw ConfigError("--compare: " + std::to_string(few.size()) + " matched run(s) have fewer than " + std::to_string(min_reps) +
                    " repetitions (e.g. " + labels.of(*b) + ": " + std::to_string(b->samples.size()) + " vs " +
                    std::to_string(n->samples.size()) + "); the U test needs " +
                    std::to_string(min_testable_repetitions(opt.alpha)) + " per side to reach p < " +
                    format_number(opt.alpha, ".3g") +
                    ": rerun with more repetitions, or pass --min-repetitions 1 to report such runs as ambiguous");
}

// The pair's timing verdict (same, faster, slower, ambiguous, not_compared) and its reason; the
// ratio, change and U test go into `r`.
std::pair<std::string, std::string> verdict_of(const Entry& b, const Entry& n, const CompareOptions& opt, ojson& r) {
  if (b.status != "ok" || n.status != "ok" || b.samples.empty() || n.samples.empty())
    return {"not_compared", b.status != "ok" ? "base " + b.status : n.status != "ok" ? "new " + n.status : "no timing samples"};
  const double t = opt.threshold;
  const double mb = median_of(b.samples), mn = median_of(n.samples);
  const double ratio = mb > 0.0 ? mn / mb : 1.0;
  r["ratio"] = ratio;
  r["change"] = ratio - 1.0;
  const UTest u = mann_whitney_u(b.samples, n.samples);
  r["pvalue"] = u.pvalue;
  r["pvalue_method"] = u.method;
  const bool beyond_slow = ratio > 1.0 + t, beyond_fast = ratio < 1.0 / (1.0 + t);
  if (min_two_sided_pvalue(b.samples.size(), n.samples.size()) >= opt.alpha)
    return {"ambiguous", "too few samples (" + std::to_string(b.samples.size()) + " vs " + std::to_string(n.samples.size()) +
                             ": p cannot go below " + format_number(opt.alpha, ".3g") + ")"};
  if (u.pvalue < opt.alpha) {
    const std::string verdict = beyond_slow ? "slower" : beyond_fast ? "faster" : "same";
    return {verdict, verdict == "same" ? "significant but within the threshold (" + percent(ratio - 1.0) + ")" : ""};
  }
  if (beyond_slow || beyond_fast)
    return {"ambiguous", "too noisy (median " + percent(ratio - 1.0) + ", p = " + format_number(u.pvalue, ".3g") + ")"};
  return {"same", ""};
}

// The headline metrics of a pair: both values, their ratio and whether the new one is worse
// beyond the threshold.
ojson pair_metrics(const Entry& b, const Entry& n, const std::vector<Metric>& metrics, double t) {
  ojson rm = ojson::object();
  for (const auto& m : metrics) {
    auto ib = b.metrics.find(m.key), in = n.metrics.find(m.key);
    if (ib == b.metrics.end() && in == n.metrics.end()) continue;
    ojson x;
    x["base"] = ib != b.metrics.end() ? ojson(ib->second) : ojson(nullptr);
    x["new"] = in != n.metrics.end() ? ojson(in->second) : ojson(nullptr);
    if (ib != b.metrics.end() && in != n.metrics.end() && ib->second > 0.0 && in->second > 0.0) {
      x["ratio"] = in->second / ib->second;
      // Worse beyond the threshold by the same measure as the time: base/new - 1 > threshold.
      x["worse"] = ib->second / in->second - 1.0 > t;
    }
    rm[m.key] = x;
  }
  return rm;
}

ojson compare_pair(const Entry& b, const Entry& n, const std::vector<Metric>& metrics, const Labels& labels,
                   const CompareOptions& opt, std::map<std::string, int>& counts) {
  ojson r;
  r["label"] = labels.of(b);
  r["identity"] = b.key;
  if (b.record.contains("backend")) r["backend"] = b.record["backend"];
  r["base"] = side_stats(b);
  r["new"] = side_stats(n);
  const auto [verdict, reason] = verdict_of(b, n, opt, r);
  ++counts[verdict];
  r["verdict"] = verdict;
  if (!reason.empty()) r["reason"] = reason;
  r["metrics"] = pair_metrics(b, n, metrics, opt.threshold);
  return r;
}

// The report's description of the comparison, before its runs.
ojson report_head(const Side& base, const Side& neu, const CompareOptions& opt, int min_reps,
                  const std::vector<Metric>& metrics, const std::string& metrics_source) {
  ojson report;
  report["tool"] = "run_experiment --compare";
  report["kind"] = base.kind;
  report["experiment"] = base.kind == "results" ? ojson(base.experiment) : ojson(nullptr);
  report["base"] = base.about;
  report["new"] = neu.about;
  report["threshold"] = opt.threshold;
  report["alpha"] = opt.alpha;
  report["min_repetitions"] = min_reps;
  report["common_params"] = opt.common_params;
  report["statistic"] =
      "Mann-Whitney U, two-sided, over the timing samples (exact without ties when a side has <= 8 samples, else the "
      "normal approximation with tie and continuity correction: scipy.stats.mannwhitneyu's method 'auto')";
  ojson mj = ojson::array();
  for (const auto& m : metrics) mj.push_back({{"key", m.key}, {"label", m.label}, {"higher_is_better", true}});
  report["metrics"] = mj;
  report["metrics_source"] = metrics_source;
  return report;
}

}  // namespace

ojson compare_results(const std::string& base_path, const std::string& new_path, const CompareOptions& opt) {
  if (!(opt.threshold >= 0.0)) throw ConfigError("--threshold must be >= 0 (a fraction: 0.10 is 10 %)");
  if (!(opt.alpha > 0.0 && opt.alpha < 1.0)) throw ConfigError("--alpha must be in (0, 1)");
  Side base = read_side(base_path), neu = read_side(new_path);
  if (base.kind != neu.kind)
    throw ConfigError("--compare: " + base_path + " is " + base.kind + " JSON and " + new_path + " is " + neu.kind + " JSON");
  if (base.kind == "results" && base.experiment != neu.experiment)
    throw ConfigError("--compare: different experiments: " + base_path + " is '" + base.experiment + "', " + new_path +
                      " is '" + neu.experiment + "'");
  std::set<std::string> keys;
  if (base.kind == "results") {
    if (opt.common_params) keys = common_param_keys(base, neu);
    assign_keys(base, opt.common_params ? &keys : nullptr);
    assign_keys(neu, opt.common_params ? &keys : nullptr);
  }
  const Matched m = match_entries(base, neu);
  if (m.pairs.empty())
    throw ConfigError("--compare: no run is in both files (" + std::to_string(base.entries.size()) + " in " + base_path + ", " +
                      std::to_string(neu.entries.size()) + " in " + new_path + ")" +
                      (base.kind == "results" && !opt.common_params
                           ? "; if the newer file only records params added since, try --common-params"
                           : ""));
  // A NEW side whose matched runs all failed or were skipped compares nothing: that is not a pass.
  if (std::none_of(m.pairs.begin(), m.pairs.end(), [](const auto& p) { return p.second->status == "ok"; }))
    throw ConfigError("--compare: " + new_path + " has no ok run among the " + std::to_string(m.pairs.size()) +
                      " matched (first: " + m.pairs.front().second->status +
                      (m.pairs.front().second->reason.empty() ? "" : ", " + m.pairs.front().second->reason) + ")");
  const int min_reps = opt.min_repetitions > 0 ? opt.min_repetitions : min_testable_repetitions(opt.alpha);
  const Labels labels = labels_of(m, opt, keys);
  check_repetitions(m, min_reps, opt, labels);

  std::string metrics_source;
  const auto metrics = headline_metrics(base, neu, metrics_source);
  ojson report = report_head(base, neu, opt, min_reps, metrics, metrics_source);
  std::map<std::string, int> counts = {{"same", 0}, {"faster", 0}, {"slower", 0}, {"ambiguous", 0}, {"not_compared", 0}};
  ojson runs = ojson::array();
  for (const auto& [b, n] : m.pairs) runs.push_back(compare_pair(*b, *n, metrics, labels, opt, counts));
  report["runs"] = runs;
  report["unmatched"] = {{"only_in_base", m.only_base}, {"only_in_new", m.only_new}, {"colliding", m.colliding}};
  ojson sum = ojson::object();
  sum["compared"] = m.pairs.size();
  for (const char* k : {"same", "faster", "slower", "ambiguous", "not_compared"}) sum[k] = counts[k];
  report["summary"] = sum;
  report["exit_status"] = counts["slower"] > 0 ? 1 : 0;
  return report;
}

// ---------------------------------------------------------------------------------------------
// Markdown

namespace {

std::string seconds_text(double s) {
  char b[32];
  const double a = std::fabs(s);
  if (a >= 1.0) std::snprintf(b, sizeof b, "%.3g s", s);
  else if (a >= 1e-3) std::snprintf(b, sizeof b, "%.3g ms", s * 1e3);
  else if (a >= 1e-6) std::snprintf(b, sizeof b, "%.3g µs", s * 1e6);
  else std::snprintf(b, sizeof b, "%.3g ns", s * 1e9);
  return b;
}

std::string about_text(const ojson& a) {
  std::string s = "`" + a.value("path", std::string()) + "`";
  std::vector<std::string> parts;
  if (a.contains("git_sha") && a["git_sha"].is_string()) {
    std::string g = a["git_sha"].get<std::string>().substr(0, 10);
    if (a.contains("git_dirty") && a["git_dirty"].is_boolean() && a["git_dirty"].get<bool>()) g += " (dirty)";
    parts.push_back(g);
  }
  for (const char* k : {"utc_time", "device", "host"})
    if (a.contains(k) && a[k].is_string()) parts.push_back(a[k].get<std::string>());
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : " — ") + parts[i];
  return s;
}

}  // namespace

std::string render_compare_markdown(const ojson& rep) {
  std::string o;
  const std::string exp = rep["experiment"].is_string() ? rep["experiment"].get<std::string>() : std::string("benchmarks");
  o += "# Compare: " + exp + "\n\n";
  o += "- base: " + about_text(rep["base"]) + "\n";
  o += "- new: " + about_text(rep["new"]) + "\n";
  o += "- verdict per run: Mann-Whitney U over the repetitions (two-sided, alpha " + format_number(rep["alpha"].get<double>(), ".3g") +
       ") and a " + format_number(100.0 * rep["threshold"].get<double>(), ".3g") +
       " % threshold on the ratio of median times; metrics: " + rep["metrics_source"].get<std::string>() + "\n\n";
  std::vector<std::string> header = {"run", "base median", "new median", "new/base", "p"};
  std::vector<bool> right = {false, true, true, true, true};
  for (const auto& m : rep["metrics"]) {
    header.push_back(m["label"].get<std::string>() + " base");
    header.push_back(m["label"].get<std::string>() + " new");
    right.push_back(true);
    right.push_back(true);
  }
  header.push_back("verdict");
  right.push_back(false);
  std::vector<std::vector<std::string>> rows;
  bool any_estimated = false;
  for (const auto& r : rep["runs"]) {
    const bool estimated = r["base"].value("estimated", false) || r["new"].value("estimated", false);
    any_estimated = any_estimated || estimated;
    std::vector<std::string> row = {r["label"].get<std::string>() + (estimated ? " (estimated)" : "")};
    for (const char* side : {"base", "new"})
      row.push_back(r[side].contains("median") ? seconds_text(r[side]["median"].get<double>()) : r[side]["status"].get<std::string>());
    row.push_back(r.contains("ratio") ? format_number(r["ratio"].get<double>(), ".3f") : "—");
    row.push_back(r.contains("pvalue") ? format_number(r["pvalue"].get<double>(), ".4f") : "—");
    for (const auto& m : rep["metrics"]) {
      const std::string k = m["key"].get<std::string>();
      for (const char* side : {"base", "new"}) {
        const ojson* v = r["metrics"].contains(k) ? &r["metrics"][k][side] : nullptr;
        std::string cell = v && v->is_number() ? format_number(v->get<double>(), ".3g") : "—";
        if (std::string(side) == "new" && v && r["metrics"][k].value("worse", false)) cell += " ▼";
        row.push_back(cell);
      }
    }
    std::string v = r["verdict"].get<std::string>();
    if (v == "slower") v = "**SLOWER**";
    if (v == "not_compared") v = "not compared";
    if (r.contains("reason")) v += ": " + r["reason"].get<std::string>();
    row.push_back(v);
    rows.push_back(std::move(row));
  }
  o += markdown_table(header, rows, right);
  const ojson& s = rep["summary"];
  const ojson& u = rep["unmatched"];
  o += "\n" + std::to_string(s["compared"].get<int>()) + " run(s) in both files: " + std::to_string(s["same"].get<int>()) +
       " same, " + std::to_string(s["faster"].get<int>()) + " faster, " + std::to_string(s["slower"].get<int>()) + " slower, " +
       std::to_string(s["ambiguous"].get<int>()) + " ambiguous, " + std::to_string(s["not_compared"].get<int>()) +
       " not compared (a side not ok); " + std::to_string(u["only_in_base"].get<int>()) + " only in base, " +
       std::to_string(u["only_in_new"].get<int>()) + " only in new" +
       (u["colliding"].get<int>() ? ", " + std::to_string(u["colliding"].get<int>()) + " not matchable (same identity twice without the params one file lacks)" : "") +
       ". ▼: a headline metric worse than base by more than the threshold." +
       (any_estimated ? " (estimated): a side's time was scaled or replayed, not measured whole (metrics.estimated)." : "") + "\n\n";
  o += rep["exit_status"].get<int>() ? "**FAIL**: " + std::to_string(s["slower"].get<int>()) + " run(s) significantly slower beyond the threshold.\n"
                                     : "PASS: no run significantly slower beyond the threshold.\n";
  return o;
}

}  // namespace gpudm::experiments
