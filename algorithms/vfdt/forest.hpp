#pragma once
// Streaming Hoeffding trees and online-bagged random forests of them (Marron, Bifet,
// De Francisci Morales, ECAI 2014), CUDA-free interface shared by every backend.
//
// The algorithm (one definition for every backend; B = batch size, B = 1 is the exact
// instance-by-instance algorithm):
//   for each mini-batch of B instances, in stream order:
//     1. predict: every tree routes every instance to a leaf; the leaf's majority class is the
//        tree's vote; the forest predicts the majority vote (ties -> lowest class);
//     2. learn:   each tree adds its Poisson(1) weight w (1 for a single tree) to the leaf's
//        class counts and to the counters n_ijk of the leaf's attribute subset;
//     3. ADWIN:   each tree feeds its 0/1 errors of step 1, in stream order, to its ADWIN;
//     4. a tree whose ADWIN signalled a rise in error is reset to a single fresh leaf; every other
//        tree checks, in node order, each leaf that has seen >= n_min weight since its last check:
//        information gain of each subset attribute, split on the best when
//        best - second > Hoeffding bound or bound < tau (multiway, one child per value; children
//        start with the class distribution of their branch, as MOA).
//   That is batch_order "deferred" (the paper's). batch_order "stream" runs steps 1-3 and the
//   reset of step 4 instance by instance inside each tree, as B = 1 does, and keeps only the split
//   checks for the batch end (ForestParams::batch_order).
// Numeric attributes are binned (quantiles of a warm-up prefix), nominal ones used as they are.
//
// Backends (sequential = the reference, openmp, cuda) follow the one lifecycle of
// algorithms/core/backend.hpp: configure(ForestParams), prepare(EncodedStream), then reset() and
// process(begin, end, predictions, timer) per pass over the stream, snapshot() for the trees.
// The family fills ForestParams from its ParamTable (family_vfdt.cpp): the switches below are
// enums, so no backend compares strings while it runs.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/core/backend.hpp"
#include "algorithms/core/dataset.hpp"
#include "algorithms/core/error.hpp"
#include "algorithms/core/phase_timer.hpp"

namespace gpudm::vfdt {

// When a cut of a tree's ADWIN window resets the tree: on a rise of the error estimate (MOA's ARF
// and its ADWINChangeDetector) or on any cut, also when the error fell, as it does while a young
// tree learns (River's ARF). vfdt_math.hpp adwin_signals.
enum class ResetRule { rise, any };
// Order of the steps inside a mini-batch (B > 1; B = 1 is the exact algorithm either way):
//  deferred: the paper's — every instance of the batch is predicted with the model from before
//            the batch, then all are learned, then ADWIN sees the batch's errors, and a tree whose
//            ADWIN fired is reset at the end of the batch (the instances after the one that fired
//            are lost to the fresh tree);
//  stream:   each tree predicts, learns and feeds its ADWIN instance by instance, as B = 1 does (a
//            prediction sees the leaf counts of the batch's earlier instances; a tree whose ADWIN
//            fires is reset at once and the fresh tree learns the rest of the batch); only the
//            split checks wait for the end of the batch;
//  automatic ("auto"): stream where the CUDA engine is the persistent one (path default, forests
//            of >= kPersistentMinTrees trees, prefix ADWIN) and leaves vote mc, else deferred — a
//            function of the parameters only, so every backend resolves it the same way (order()).
// The CUDA batched engine and the faithful path run deferred only.
enum class BatchOrder { automatic, stream, deferred };
// Leaf vote: majority class (the paper's) or naive Bayes over the leaf's attribute counters (MOA's
// NB leaves; vfdt_math.hpp naive_bayes_vote). nb is not on path faithful; it makes batch_order
// auto resolve to deferred (the GPU's in-batch walk relies on majority votes).
enum class LeafPrediction { mc, nb };
// n of the Hoeffding bound: learned (the weight a leaf has learned since it was created, VFDT's n;
// the faithful path's, as the paper's counters) or total (plus the class counts it inherited from
// its parent's branch at the split: MOA's and River's weightSeen, so a new leaf's bound starts
// smaller); automatic ("auto") = total on path default, learned on path faithful. With total our
// single tree equals River's HoeffdingTreeClassifier on covertype, RT, rt_moa, Connect-4 and Poker
// prefixes to the last digit (results/cpu/vfdt_river_peer).
enum class BoundWeight { automatic, learned, total };
// CUDA layout: compact ("default": the CPU engine's node pool) or faithful (the paper's 2^depth
// array, binary attributes). The CPU backends compute the same trees either way.
enum class ForestPath { compact, faithful };
// CUDA engine of path default: persistent (one block per tree walks the whole stream; one launch),
// batched (five kernels per batch, every tree in each) or automatic ("auto": cuda_engine()).
enum class Engine { automatic, persistent, batched };
// CUDA ADWIN: prefix (running error counts, every tick of a batch tested at once; the only one the
// persistent engine runs), warp (block inserts, warp checks) or simple (one lane inserts). The
// faithful path runs warp (or simple).
enum class AdwinKernel { prefix, warp, simple };

// The names configs and results use.
const char* to_string(ResetRule v);
const char* to_string(BatchOrder v);
const char* to_string(LeafPrediction v);
const char* to_string(BoundWeight v);
const char* to_string(ForestPath v);
const char* to_string(Engine v);
const char* to_string(AdwinKernel v);
// Every value of an enum with its name, for a ParamTable's add_enum.
template <class E>
std::vector<std::pair<std::string, E>> named(std::initializer_list<E> values) {
  std::vector<std::pair<std::string, E>> out;
  for (E v : values) out.emplace_back(to_string(v), v);
  return out;
}

// The options of every backend (BackendOf<ForestParams, EncodedStream>). Each initialiser is the
// family's default for its param (family_vfdt.cpp declares them once, from these values).
struct ForestParams {
  int trees = 100;            // M; 1 with bagging/adwin off = a single Hoeffding tree (GVFDt)
  int batch = 1024;           // B: instances per mini-batch (1 = the exact streaming algorithm)
  double delta = 1e-7;        // split confidence
  double tau = 0.05;          // tie threshold
  int grace = 200;            // n_min
  int features = 0;           // attributes per leaf; 0 = floor(sqrt(d)) for forests, d for one tree
  bool bagging = true;        // Poisson(1) weights
  bool adwin = true;          // one ADWIN per tree resetting it on a rise in error
  double adwin_delta = 0.002;
  ResetRule reset_rule = ResetRule::rise;
  BatchOrder batch_order = BatchOrder::automatic;
  LeafPrediction leaf_prediction = LeafPrediction::mc;
  BoundWeight bound_weight = BoundWeight::automatic;
  int max_depth = 20;
  int max_nodes = 4096;       // node-pool capacity per tree (leaf slots = max_nodes)
  std::uint64_t seed = 1;
  ForestPath path = ForestPath::compact;
  Engine engine = Engine::automatic;
  AdwinKernel adwin_kernel = AdwinKernel::prefix;
  int threads = 0;            // OpenMP threads (0 = all); the other backends ignore it
  // Tree-parallel ranks (sharded_forest.hpp), not config params: this forest holds trees
  // [first_tree, first_tree + trees) of a forest of forest_trees (0: trees), so every tree draws
  // its bagging weights and leaf keys from its global index and sees the whole forest's feature
  // rule (every backend, the CUDA one included: its kernels seed by first_tree + t).
  int first_tree = 0;
  int forest_trees = 0;
  int total_trees() const { return forest_trees > 0 ? forest_trees : trees; }

  // The engine "auto" resolves to: persistent for forests of >= kPersistentMinTrees trees with the
  // prefix ADWIN (one SM per tree keeps the GPU busy), batched otherwise (a single tree's batch is
  // spread over many blocks; one block per tree would leave all but one SM idle).
  static constexpr int kPersistentMinTrees = 16;
  Engine cuda_engine() const;       // persistent | batched
  BatchOrder order() const;         // batch_order with auto resolved: stream | deferred
  bool stream_order() const { return order() == BatchOrder::stream; }
  bool bound_total() const {
    return bound_weight == BoundWeight::total || (bound_weight == BoundWeight::automatic && path == ForestPath::compact);
  }
  bool naive_bayes() const { return leaf_prediction == LeafPrediction::nb; }
  bool reset_on_any_cut() const { return reset_rule == ResetRule::any; }
  int features_for(int d) const;
  void validate(int d) const;  // throws gpudm::Error naming the parameter
  // Checks against the stream too (the faithful path needs binary attributes and a depth whose
  // 2^(depth+1)-1 array fits); every backend's prepare() calls it.
  void validate(const struct EncodedStream& s) const;
};

// How a Dataset's attributes were turned into small integer codes.
struct AttributeCoding {
  std::string name;
  std::string kind;         // "binary" | "nominal" | "binned"
  bool source_nominal = false;  // the Dataset attribute was nominal
  int values = 2;           // number of codes
  std::vector<float> edges;  // binned: code = number of edges <= x
};

struct EncodingOptions {
  int bins = 8;             // numeric attributes: at most this many quantile bins
  int bin_warmup = 1000;    // bin edges from the first rows of the stream only (no peeking)
  int max_values = 32;      // nominal attributes with more values keep the last code for the rest
};

// The stream as the learners consume it: codes row-major (instance i's attributes contiguous).
struct EncodedStream {
  std::string name;
  std::size_t rows = 0;
  int attributes = 0;
  int classes = 0;
  int max_values = 2;  // max over attributes
  std::vector<AttributeCoding> coding;
  std::vector<std::uint8_t> codes;    // rows x attributes
  std::vector<std::uint8_t> labels;   // rows

  std::uint8_t code(std::size_t i, int a) const { return codes[i * attributes + a]; }
  bool all_binary() const;
  // Encodes a classification Dataset. Throws gpudm::Error for regression targets, NaN/missing
  // cells, nominal values outside the attribute's value list, labels out of range.
  static EncodedStream encode(const Dataset& d, const EncodingOptions& opt = {});
  // Encodes `d` with an existing coding (a later chunk of the same stream); throws when the
  // attribute count or kinds differ.
  static EncodedStream encode_like(const Dataset& d, const EncodedStream& schema);
};

// Sizes of the flat forest arrays (identical on every backend).
struct ForestLayout {
  int trees = 0, attributes = 0, classes = 0, values = 0, features = 0;
  int nodes = 0;  // capacity per tree (node pool and leaf slots)
  std::size_t counters_per_slot() const { return std::size_t(features) * values * classes; }
  static ForestLayout make(const EncodedStream& s, const ForestParams& p);
};

// The trees' structure after a run (for equivalence tests, checksums and tree-size metrics).
struct ForestSnapshot {
  ForestLayout layout;
  std::vector<std::int32_t> n_nodes;     // per tree
  std::vector<std::uint32_t> generation;  // resets per tree
  std::vector<std::int32_t> node_attr;    // trees x nodes, -1 = leaf (only [0, n_nodes) valid)
  std::vector<std::int32_t> node_child;   // internal: first child; leaf: leaf slot
  std::vector<std::uint32_t> slot_class;  // trees x nodes x classes (class counts of leaf slots)
  std::vector<std::int32_t> node_depth;   // trees x nodes
  std::vector<std::int32_t> attr_values;  // per attribute: children of a split on it
  long long splits = 0;
  long long resets = 0;

  int leaves(int t) const;
  int depth(int t) const;
  // Checksum of each tree in preorder (attributes, leaf class counts): independent of how a
  // backend numbers its nodes and slots, equal across backends.
  std::string checksum() const;
  // First difference to `o` in the same canonical preorder, "" when identical.
  std::string diff(const ForestSnapshot& o) const;
};

// A streaming-forest backend. configure(params), prepare(stream) (allocations and layout; uploads
// nothing of the stream that process() times), then per pass over the stream: reset() and
// process() calls. One call to process() runs the prequential loop over [begin, end) of the
// prepared stream in mini-batches of params.batch (a batch never straddles two calls; callers pass
// chunk sizes that are multiples of the batch), writes the forest's predictions to
// predictions[0, end-begin) and adds its phases (traversal, vote, counters, adwin, split,
// transfers) to `timer` (nothing when the timer is disabled).
class ForestBackend : public BackendOf<ForestParams, EncodedStream> {
 public:
  // A fresh forest (every tree a single empty leaf, ADWINs empty).
  virtual void reset() = 0;
  virtual void process(std::size_t begin, std::size_t end, std::int32_t* predictions, PhaseTimer& timer) = 0;
  // process() that writes, instead of the forest's majority, its trees' votes per instance and
  // class (votes[(i - begin) * classes + c]): forests split over ranks add them up. The default
  // throws (a backend that cannot).
  virtual void process_votes(std::size_t begin, std::size_t end, std::uint32_t* votes, PhaseTimer& timer);
  // The trees' structure now.
  virtual ForestSnapshot snapshot() = 0;
  // The same forest on a later chunk of its stream, encoded with the prepared stream's coding
  // (EncodedStream::encode_like): trees, counters and detectors are kept, and the chunk's instance
  // i is the stream's instance first_instance + i (its bagging weights), so a stream learned chunk
  // by chunk (every chunk but the last a multiple of the batch) gives the forest that learns it
  // whole. process() and process_votes() then range over the chunk, which must outlive them.
  // Throws for a chunk of another coding; the default throws (a backend that cannot).
  virtual void continue_with(const EncodedStream& chunk, std::uint64_t first_instance);
};

// Throws unless `chunk` has the attributes, value counts and classes of the prepared layout (and
// codes and labels of its rows): what continue_with() needs of a later chunk.
void check_chunk(const ForestLayout& layout, const std::vector<int>& attr_values, const EncodedStream& chunk,
                 const std::string& backend);

}  // namespace gpudm::vfdt
