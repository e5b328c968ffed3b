#pragma once
// The CPU engine of the streaming forest: flat per-tree state (node pool, leaf slots, counters,
// ADWIN) and the per-batch steps of forest.hpp. Steps on different trees touch disjoint state,
// so a backend may run them concurrently; the sequential and OpenMP backends differ only in the
// TaskRunner they hand it (algorithms/core/task_runner.hpp), which keeps their results identical.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "algorithms/core/task_runner.hpp"
#include "algorithms/vfdt/forest.hpp"
#include "algorithms/vfdt/vfdt_math.hpp"

namespace gpudm::vfdt {

class CpuForest : public ForestBackend {
 public:
  // The trees' steps run as tasks on `tasks` (fixed shares), the votes in ranges.
  explicit CpuForest(std::unique_ptr<TaskRunner> tasks = std::make_unique<InlineTasks>()) : tasks_(std::move(tasks)) {}
  // Validates the configured params against the stream and sizes every array.
  void prepare(const EncodedStream& stream) override;
  void reset() override;
  void process(std::size_t begin, std::size_t end, std::int32_t* predictions, PhaseTimer& timer) override;
  void process_votes(std::size_t begin, std::size_t end, std::uint32_t* votes, PhaseTimer& timer) override;
  ForestSnapshot snapshot() override;
  void continue_with(const EncodedStream& chunk, std::uint64_t first_instance) override;

  // ---- the per-batch steps (batch = instances [b0, b1) of the stream)
  void predict_tree(int t, std::size_t b0, std::size_t b1);
  void vote(std::size_t j0, std::size_t j1, std::size_t b0, std::int32_t* out) const;  // batch positions [j0, j1)
  void tally(std::size_t j0, std::size_t j1, std::uint32_t* votes) const;  // per class, batch positions [j0, j1)
  void learn_tree(int t, std::size_t b0, std::size_t b1);
  void adwin_tree(int t, std::size_t b0, std::size_t b1);
  void split_tree(int t);
  // batch_order "stream": predict, learn and ADWIN instance by instance (reset at once) for tree t
  void stream_tree(int t, std::size_t b0, std::size_t b1);

 protected:
  TaskRunner& tasks() { return *tasks_; }
  const TaskRunner& tasks() const { return *tasks_; }

 private:
  void parallel_trees(int trees, const std::function<void(int)>& fn);
  void parallel_instances(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn);

  // The prequential loop; each batch's votes go to `vote_step(b0, b1)`.
  template <class VoteStep>
  void run(std::size_t begin, std::size_t end, PhaseTimer& timer, VoteStep vote_step);
  std::uint32_t global(int t) const { return static_cast<std::uint32_t>(p_.first_tree + t); }  // the tree's id in the forest
  int route(int t, std::size_t i) const;                 // leaf slot of stream instance i in tree t
  std::uint8_t leaf_vote(int t, int slot, std::size_t i);  // leaf's vote for instance i (mc or nb)
  void learn_one(int t, std::size_t i, int slot);         // tree t learns instance i at its leaf
  void init_tree(int t, std::uint32_t generation);
  void reset_tree(int t);  // after drift: a fresh tree of the next generation
  void init_slot(int t, int slot, std::uint64_t key, int depth);
  std::size_t node_index(int t, int node) const { return std::size_t(t) * L_.nodes + node; }
  std::size_t slot_index(int t, int slot) const { return std::size_t(t) * L_.nodes + slot; }
  std::uint32_t* counters(int t, int slot) { return counters_.data() + slot_index(t, slot) * L_.counters_per_slot(); }

  std::unique_ptr<TaskRunner> tasks_;
  const EncodedStream* s_ = nullptr;
  std::uint64_t first_ = 0;  // the stream index of s_'s instance 0 (continue_with)
  ForestParams p_;
  // p_'s resolved choices, read per instance or per split check
  bool stream_order_ = false;  // p_.stream_order()
  bool naive_bayes_ = false;   // p_.naive_bayes()
  bool bound_total_ = false;   // p_.bound_total()
  bool reset_any_ = false;     // p_.reset_on_any_cut()
  ForestLayout L_;
  double hb_numer_ = 0;
  std::vector<int> attr_values_;
  // per tree
  std::vector<std::int32_t> n_nodes_, n_slots_;
  std::vector<std::uint32_t> generation_;
  std::vector<std::uint8_t> drift_;
  std::vector<Adwin> adwin_;
  std::vector<long long> splits_, resets_;
  // per node (trees x nodes)
  std::vector<std::int32_t> node_attr_, node_child_, node_depth_;
  // per leaf slot (trees x nodes)
  std::vector<std::uint32_t> slot_class_;  // x classes: class counts (inherited + learned)
  std::vector<std::uint32_t> slot_seen_, slot_last_;
  std::vector<std::uint64_t> slot_key_;
  std::vector<std::int32_t> slot_depth_;
  std::vector<std::int16_t> slot_subset_;  // x features
  std::vector<std::uint32_t> counters_;    // x features x values x classes
  std::vector<std::int32_t> slot_node_;    // node holding the leaf slot
  std::vector<std::uint8_t> slot_due_;     // already in due_[t]
  // Leaves whose weight since their last check reached n_min during this batch. Every due leaf
  // is checked at the end of the batch, so the due ones are always among the touched ones: the
  // list replaces a scan of all nodes without changing the order (sorted by node index).
  std::vector<std::vector<std::int32_t>> due_;
  // per batch (trees x batch)
  std::vector<std::int32_t> leaf_;
  std::vector<std::uint8_t> tree_pred_;
};

}  // namespace gpudm::vfdt
