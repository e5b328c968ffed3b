#pragma once
// run_experiment --compare BASE.json NEW.json: two results files of one experiment (or two
// Google Benchmark JSON files), run by run, with the only statistics the project has for
// "did it get slower": a two-sided Mann-Whitney U test over the repetition samples
// (scripts/perf_gate.py and the CI gate call this mode; docs/perf-regression.md says why the
// statistics live here and not in Python).
//
// Conventions borrowed from Google Benchmark's compare.py (the U test, its p-value column, "9
// repetitions is the lowest reasonable number") and nvbench's compare script (one row per
// matched state, base and new side by side, a SAME/FAST/SLOW status, unmatched states counted);
// unlike both, the exit status is a verdict a CI job can fail on.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpudm::experiments {

using ojson = nlohmann::ordered_json;

// Two-sided Mann-Whitney U test of samples `a` against `b`, as scipy.stats.mannwhitneyu
// (alternative "two-sided", method "auto") computes it, so our p-values are the ones compare.py
// prints: the exact distribution of U when there are no ties and one sample has at most 8
// values, else the normal approximation with tie correction and continuity correction.
struct UTest {
  double u = 0.0;        // U statistic of `a` (pairs a_i > b_j, ties counted 1/2)
  double pvalue = 1.0;   // two-sided, in [0, 1]; 1 when every value is tied
  std::string method;    // "exact" | "asymptotic"
};
UTest mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

// The smallest two-sided p-value the test can give for samples of n1 and n2 values
// (2 / C(n1 + n2, n1), at most 1): when it is not below alpha, no difference can be significant.
double min_two_sided_pvalue(std::size_t n1, std::size_t n2);
// The fewest repetitions per side with which n-vs-n can reach p < alpha (4 for alpha = 0.05).
int min_testable_repetitions(double alpha);

struct CompareOptions {
  double threshold = 0.10;   // relative change of the median time that counts (10 %)
  double alpha = 0.05;       // significance level of the U test
  int min_repetitions = -1;  // fewer samples in a matched ok run is an input error; -1: min_testable_repetitions(alpha)
  // Match runs on the params both files record (a param added between the two versions, with
  // its default filled in, does not make every run of the newer file a different run).
  bool common_params = false;
};

// Reads both files and compares them. Throws ConfigError (exit status 2) on bad input: a file
// that cannot be read or is neither a schema-1 results file nor Google Benchmark JSON, two
// different experiments, no common run, a matched ok run with fewer than min_repetitions samples.
// The report (JSON, the --json output) holds one entry per matched run with both medians, the
// ratio new/base, the U test, the verdict and the headline metrics; its "exit_status" is 1 when
// any run is "slower", else 0.
ojson compare_results(const std::string& base_path, const std::string& new_path, const CompareOptions& opt);

// The Markdown rendering of a report: a heading naming both files, the table, the summary.
std::string render_compare_markdown(const ojson& report);

}  // namespace gpudm::experiments
