#pragma once
// Samples of a GMT run's evaluation batches, for estimating the induction time of backends too
// slow to run the full 10,000 iterations (CPU on large data, the faithful GPU path): the fast
// run writes every k-th generation's batch of modified individuals (compact trees) and its totals;
// the slow backend replays sampled batches and scales its time per evaluation by the run's
// evaluation count. Unlike timing the first K iterations (the paper's footnote a), the sampled
// batches come from the whole run, so they hold the trees the run actually evaluates.
//
// File (binary, host byte order): "GMTBATCH" v2, dataset name, rows, cols, seed; then records:
// a batch (generation, the repair rule, trees: salt, the compact tree's node array with the leaf
// models, flags and the clean leaves' count and SSE) or the run's summary. v1 (2^levels flat
// trees) is refused with a message.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "algorithms/gmt/evaluator.hpp"
#include "algorithms/gmt/tree.hpp"

namespace gpudm {
namespace gmt {

struct RecordedRun {
  std::string backend;            // the run that wrote the sample
  std::int64_t evaluations = 0;   // individuals evaluated in the run (initial population included)
  int iterations = 0;
  double scale = 1.0;             // extrapolation of the run itself (extrapolate_iterations / iterations)
  double host_seconds = 0.0;      // the run's cpu_ea (host EA work, backend-independent)
  double run_seconds = 0.0;       // the run's wall time
  double evaluator_seconds = 0.0; // the run's evaluator phases
};

// One recorded evaluator call: the trees as the EA handed them over (before their repairs).
struct SampledBatch {
  int generation = 0;
  RepairSpec repair;
  std::vector<Tree> trees;
  std::vector<std::uint64_t> salts;
  std::size_t size() const { return trees.size(); }
  // An evaluator batch over copies of the trees (`copies` receives them; evaluation edits trees).
  EvalBatch batch(std::vector<Tree>& copies) const;
};

struct BatchSample {
  std::string dataset;
  std::uint64_t rows = 0, cols = 0, seed = 0;
  std::vector<SampledBatch> batches;
  RecordedRun run;
  bool complete = false;  // the summary record was written
  std::int64_t trees() const;
};

class BatchSampleWriter {
 public:
  // Writes to path + ".tmp" and renames it to `path` in finish(); creates missing directories.
  BatchSampleWriter(const std::string& path, const std::string& dataset, std::uint64_t rows, std::uint64_t cols,
                    std::uint64_t seed);
  void add(int generation, const EvalBatch& batch);
  void add(const SampledBatch& batch);  // (the same record, from kept copies)
  void finish(const RecordedRun& run);
  int batches() const { return batches_; }

 private:
  std::string path_;
  std::ofstream out_;
  int batches_ = 0;
  void put_batch(int generation, const RepairSpec& repair, std::size_t trees, const Tree* const* tree, const std::uint64_t* salts);
};

// Throws gpudm::Error naming the file for a missing, truncated, foreign or corrupt file (a tree
// Tree::from_parts refuses), or one whose trees need more than `max_bytes` of host memory (0: the
// memory available).
BatchSample read_batch_sample(const std::string& path, std::size_t max_bytes = 0);

// "{experiment}", "{dataset}" and "{seed}" in `pattern` replaced.
std::string expand_sample_path(std::string pattern, const std::string& experiment, const std::string& dataset,
                               std::uint64_t seed);

// Indices of the batches to replay: whole batches spread evenly over the sample, at least one,
// at most `max_trees` trees in all (unless the first batch alone has more).
std::vector<std::size_t> pick_batches(const BatchSample& s, std::int64_t max_trees);

}  // namespace gmt
}  // namespace gpudm
