#pragma once
// The record / replay params of the families whose slower backends are estimated by replaying
// what the fast run recorded (algorithms/core/replay_estimate.hpp): how often and where the run
// records, and replay_from. One place for their names' relations and their help texts; each
// family names what it records and how the time is modelled.
#include <string>

#include "algorithms/core/params.hpp"

namespace gpudm {

struct ReplayParamText {
  std::string every, file;    // the recording params' names
  std::string recorded;       // what `every` records: "every k-th generation's batch of ..."
  std::string for_backend;    // whose replay it serves: "a slower backend"
  std::string file_fields;    // the {fields} `file` has filled in: "{experiment}, {dataset} (with its options), {seed}"
  std::string replay;         // replay_from's action: "estimate instead of running the EA: replay batches"
  std::string check;          // what the replay checks, after "on this backend" ("" or ", their counts ...")
  std::string time_model;     // "the recorded host time + ... interpolated between the sampled ..."
};

template <class S, class Every>
void add_replay_params(ParamTable<S>& t, Every S::*every, std::string S::*file, std::string S::*from,
                       const ReplayParamText& x) {
  t.add(x.every, every, "record " + x.recorded + " in " + x.file + ", for replay_from on " + x.for_backend + " (0 = off)")
      .at_least(0);
  t.add(x.file, file, "where " + x.every + " writes and replay_from reads (" + x.file_fields + " replaced)");
  t.add("replay_from", from,
        x.replay + " recorded by " + x.every + " (this file; \"sample\" = " + x.file + ") on this backend" + x.check +
            "; time = " + x.time_model + " (algorithms/core/replay_estimate.hpp); flagged estimated");
}

}  // namespace gpudm
