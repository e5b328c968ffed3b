#pragma once
// The life of one results file during one invocation (docs/reliability.md): the lock (one writer
// from before the old file is read until the tables are written), what came before (the results
// file of the last complete invocation and the journal of one that did not finish; --resume
// continues from both, a fresh run leaves both alone until it has finished), the journal line
// appended after every run, and the compaction that replaces the file atomically at the end.
// The sweep itself stays in the runner.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "experiments/results.hpp"

namespace gpudm::experiments {

// A results file read back (--render, --resume): depth-checked, parsed, schema-checked; each
// error says what cannot be done (`verb`) and, for --resume, what to do (`hint`).
ojson read_results_file(const std::string& path, const std::string& verb, const std::string& hint);

// A run record whose status is ok.
bool record_ok(const ojson& rec);

class ResultsSession {
 public:
  // Takes the lock on `<dir>/<stem>.json` naming `command` as the holder (creating `dir` if
  // needed) and removes temp files of dead processes. Until the session ends nothing else may
  // write the file; when it ends, a `dir` it created is removed again if it stayed empty (a sweep
  // stopped by bad data before its first run leaves nothing behind).
  ResultsSession(const std::filesystem::path& dir, const std::string& stem, const std::string& command);
  ~ResultsSession();
  ResultsSession(const ResultsSession&) = delete;
  ResultsSession& operator=(const ResultsSession&) = delete;

  const std::string& json_path() const { return json_path_; }

  // --render: the results file as it stands; an error when there is none.
  ojson read_for_render() const;

  // Starts the document from `doc` (its runs empty). With `resume`, takes the runs of the results
  // file (when they count) and of an unfinished invocation's journal, and extends the provenance
  // chain; otherwise an unfinished journal is announced on stderr (unless `quiet`) and left alone
  // until this invocation's first run replaces it.
  void open(ojson doc, bool resume, bool quiet);

  // Whether the document already holds an ok run of this identity (reused, not run again).
  bool has_ok_run(const std::string& identity) const;
  // The identity of the ok run whose record names `path` under "outputs" ("" if none).
  std::string kept_run_with_output(const std::string& path) const;
  bool quiet() const { return quiet_; }

  // A run that finished now: into the document (replacing a record of the same identity) and,
  // O(run), one line appended to the journal (created by the first run).
  void record(const ojson& rec);

  ojson& document() { return doc_; }

  // Compaction: the complete document replaces the file in one atomic rename (also when every
  // run was reused, so the provenance records this invocation), then the journal goes.
  void commit();

 private:
  void add_run(const ojson& rec);
  void continue_from_before();

  std::filesystem::path dir_;
  bool remove_dir_;
  std::string json_path_;
  std::string journal_path_;
  std::optional<ResultsLock> lock_;
  bool resume_ = false;
  bool quiet_ = false;
  ojson doc_;
  std::map<std::string, std::size_t> index_;  // identity -> position in doc_["runs"]
  std::string journal_base_ = "none";
  std::vector<ojson> carried_;  // records of an unfinished invocation that this one continues
  std::optional<Journal> journal_;
};

}  // namespace gpudm::experiments
