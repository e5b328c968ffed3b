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

struct RenderedTables {
  std::string markdown;  // every table, with its notes
  std::string csv;       // every table; first column "table" holds the table's title
};

// Renders `tables` (validated table specs) over results["runs"]; the default table when
// `tables` is empty. `paper_dir` holds the paper CSVs named by "paper_csv"; `peers` the peer
// results columns may join.
RenderedTables render_tables(const ojson& results, const std::vector<ojson>& tables, const std::string& paper_dir,
                             const std::vector<PeerResults>& peers = {});

// The whole Markdown document of an experiment: heading, paper reference, provenance line,
// then render_tables(...).markdown.
std::string render_experiment_markdown(const ojson& results, const RenderedTables& tables);

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
