#pragma once
// Table renderer: Markdown and CSV in a paper's layout (docs/config-format.md, "Tables"): rows
// and columns as the paper printed them, our value beside the paper's, ratio columns from the
// medians of the same run, surrogate (†) and estimated (*) markers, skipped/failed reasons under
// the table. A config without tables gets the default table: one row per run.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpudm::experiments {

using ojson = nlohmann::ordered_json;

// Results of another tool (River, Weka, ...) joined into tables beside ours: a config's "peers"
// (docs/config-format.md). A column naming the peer takes, for each of its runs, the first row
// whose `match` keys equal the run's values (and whose `where` keys equal the column's), and
// reads "peer.X" from that row, or our own value at a path with "{peer.X}" filled in from it.
struct PeerResults {
  std::string name;       // what columns refer to ("peer": NAME)
  std::string file;       // as the config names it (messages)
  ojson match;            // {dotted path in a peer row: dotted path in a run}
  std::vector<ojson> rows;
};

// One distinct (commit, machine) among the runs the tables show. A run names its own
// ("provenance"); a results file whose runs do not is taken as measured where its top-level
// block says. A file that mixes both (an older file resumed) cannot say which earlier
// invocation measured the runs without one: they form one origin, `unrecorded`.
struct RunOrigin {
  std::string tag;                  // "a", "b", ... when the tables show more than one origin
  std::string commit;               // 12 hex digits, "-dirty" when the tree had changes
  std::string machine;              // "NVIDIA H200 + <CPU> (16 threads)"
  std::string host;
  std::string first_utc, last_utc;  // when its first and last runs finished
  std::string unrecorded;           // non-empty: what is known of those runs' origin instead
};

struct RenderedTables {
  std::string markdown;  // every table, with its notes
  std::string csv;       // every table; first column "table" holds the table's title
  std::vector<RunOrigin> origins;  // in the order of their first run; never empty
};

// Renders `tables` (validated table specs) over results["runs"]; the default table when
// `tables` is empty. `paper_dir` holds the paper CSVs named by "paper_csv"; `peers` the peer
// results columns may join.
RenderedTables render_tables(const ojson& results, const std::vector<ojson>& tables, const std::string& paper_dir,
                             const std::vector<PeerResults>& peers = {});

// The whole Markdown document of an experiment: heading, paper reference, provenance header,
// then render_tables(...).markdown. The header names the config by its path in the repository at
// `repo_root` ("" for the source tree this was built from), or says it is not there, and names
// the origins: one line when there is one, else one tagged line per origin (rows carry the tags).
std::string render_experiment_markdown(const ojson& results, const RenderedTables& tables,
                                       const std::string& repo_root = "");

// Median of `v` (mean of the two middle values for an even count); `v` must not be empty.
double median_of(std::vector<double> v);
// Params whose values differ across `runs` (results records), in first-seen order.
std::vector<std::string> varying_params(const std::vector<const ojson*>& runs);
// "backend on dataset (k=v, ...)" for the params `vary` names.
std::string run_label(const ojson& run, const std::vector<std::string>& vary);

// A Markdown table; `right[i]` right-aligns column i.
std::string markdown_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                           const std::vector<bool>& right);

}  // namespace gpudm::experiments
