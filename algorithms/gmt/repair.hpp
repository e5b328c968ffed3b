#pragma once
// The repair rule, decided from routing counts (the repairs folded into one evaluation).
//
// After an evaluation the EA repairs every node one of whose children holds fewer than
// `min_rows` training rows. A repair pass visits the tree top-down and repairs the topmost such
// nodes (the nodes below a repaired one are not examined in that pass); passes repeat until no node
// needs a repair. The passes need no evaluation of their own (a full evaluation of the repaired
// trees after every pass would cost up to one evaluation per pass and generation): a
// node's count only changes when a repair sends the rows of a small child into the other child's
// subtree, and those rows are few (fewer than min_rows) and known, because the evaluator records
// the rows of every leaf under min_rows. So the passes run on the host from one routing of the
// original tree, and the evaluator then evaluates the final tree once.
//
//  promote (default): the node is replaced by its populated child's subtree (the test that sends
//            almost no rows one way is removed, the rest of the tree below is kept, and the few rows
//            of the other side now go down that subtree); a node whose children are both under the
//            limit, or whose populated child is a leaf, becomes a leaf (the leaf child's attributes).
//  collapse: the node becomes a leaf (model attributes of the larger child if it is a leaf).
// The repaired subtree's leaves are refit (dirty).
#include <cstdint>
#include <vector>

#include "algorithms/core/dataset.hpp"
#include "algorithms/gmt/tree.hpp"

namespace gpudm {
namespace gmt {

enum class RepairMode { promote, collapse };

struct RepairSpec {
  int min_rows = 0;  // 0: no repair
  RepairMode mode = RepairMode::promote;
};

// What an evaluator knows after routing a tree: per node (leaves; internal entries ignored) the
// row count, and the rows of every leaf with 0 < count < min_rows (ascending).
struct RoutedCounts {
  std::vector<std::int64_t> count;       // per node
  std::vector<std::int32_t> small_begin;  // per node: offset into small_rows, -1 when not recorded
  std::vector<std::int64_t> small_rows;
  void reset(int nodes) {
    count.assign(static_cast<std::size_t>(nodes), 0);
    small_begin.assign(static_cast<std::size_t>(nodes), -1);
    small_rows.clear();
  }
};

struct RepairOutcome {
  int repairs = 0;       // nodes repaired
  int passes = 0;        // repair passes that changed the tree
  bool complete = true;  // false: a small node's rows were not recorded; the tree was left as it was
  // Per node of the repaired tree (leaves): which rows it holds. origin >= 0: all rows of that node
  // of the original tree plus `extra`; -1: exactly `extra`; -2: rows of several original leaves (a
  // collapsed internal node; its statistics must be summed again).
  std::vector<std::int32_t> origin;
  std::vector<std::vector<std::int64_t>> extra;  // ascending
  std::vector<std::int64_t> count;                // per node of the repaired tree
};

// Applies the repair passes to `t` (routed as `routed`); `d` routes the moved rows. Returns
// repairs == 0 (and leaves `t` untouched) when no node needs one.
RepairOutcome repair_tree(Tree& t, const RepairSpec& spec, const RoutedCounts& routed, const Dataset& d);

// True when some internal node of `t` has a child under min_rows rows according to `count`
// (per node, leaves filled: internal counts are summed here).
bool needs_repair(const Tree& t, const RepairSpec& spec, const std::vector<std::int64_t>& leaf_count);

}  // namespace gmt
}  // namespace gpudm
