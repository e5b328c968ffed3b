#pragma once
// A forest (or one Hoeffding tree) learned online, chunk by chunk, as a streaming library's user
// drives it (the Python package's HoeffdingForestClassifier): the family's params read as its runs
// read them, the first chunk's coding kept for every later one (EncodedStream::encode_like),
// ForestBackend::continue_with() between chunks, and a vote from the trees' structure alone for
// instances it only predicts (no learning), which is also its saved model.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/core/params.hpp"
#include "algorithms/core/registry.hpp"
#include "algorithms/vfdt/forest.hpp"

namespace gpudm::vfdt {

struct OnlineSettings {
  ForestParams forest;      // mode "tree" applied (one tree, no bagging or ADWIN)
  EncodingOptions encoding;
};

// The vfdt family's params (run_experiment --train vfdt --help) and a case of them read as the
// family reads it (family_vfdt.cpp).
std::vector<ParamSpec> online_param_specs();
OnlineSettings read_online_settings(const nlohmann::json& params);

class OnlineForest {
 public:
  // `backend` of the vfdt family in `registry`; `seed` the bagging weights' and leaves' seed.
  OnlineForest(const Registry& registry, const std::string& backend, const OnlineSettings& settings, std::uint64_t seed);
  // Predicts, then learns the chunk (prequential, in mini-batches of the params' batch: a stream
  // learned in chunks of multiples of the batch is the stream learned whole); the forest's
  // predictions go to `predictions[0, rows)`. The first chunk fixes the coding (numeric bins from
  // its first bin_warmup rows) and the classes.
  void learn(const Dataset& chunk, std::int32_t* predictions);
  std::uint64_t seen() const { return seen_; }
  // The trees now as a model (forest_model_json).
  nlohmann::ordered_json model() const;

 private:
  const Registry* registry_;
  std::string backend_name_;
  OnlineSettings s_;
  std::unique_ptr<ForestBackend> backend_;
  std::unique_ptr<EncodedStream> chunk_;  // the chunk the backend points at
  EncodedStream schema_;                  // the first chunk's coding, no rows
  std::uint64_t seen_ = 0;
};

// A forest's trees (a snapshot) and its stream's coding as JSON (format "gpudm-vfdt-forest",
// version 1; nodes breadth first, so equal trees give equal files on every backend), and back:
// what predicting needs, on any machine.
nlohmann::ordered_json forest_model_json(const ForestSnapshot& f, const EncodedStream& schema);
struct ForestModel {
  ForestSnapshot trees;
  EncodedStream schema;  // coding and classes, no rows
};
ForestModel forest_model_from_json(const nlohmann::json& j, const std::string& source);

// Each tree's vote for every instance of `s` from the trees' structure alone (no learning): the
// instance is routed to a leaf and the tree votes the leaf's majority class (ties: the lowest),
// as the prequential predict step does with majority-class leaves. votes[i * classes + c].
void snapshot_votes(const ForestSnapshot& f, const EncodedStream& s, std::uint32_t* votes);

}  // namespace gpudm::vfdt
