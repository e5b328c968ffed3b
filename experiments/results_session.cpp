#include "experiments/results_session.hpp"

#include <cstdio>

#include "algorithms/core/json_limits.hpp"
#include "experiments/config.hpp"
#include "experiments/text.hpp"

namespace gpudm::experiments {

namespace fs = std::filesystem;

namespace {

// The provenance chain of a resumed file: the previous invocations' provenance blocks (each
// without its own chain), oldest first, ending with `last`'s.
ojson provenance_chain(const ojson& last) {
  const ojson& op = last["provenance"];
  ojson previous = ojson::array();
  if (op.contains("previous") && op["previous"].is_array())
    for (const auto& p : op["previous"]) previous.push_back(p);
  ojson brief = op;
  brief.erase("previous");
  previous.push_back(brief);
  return previous;
}

}  // namespace

bool record_ok(const ojson& rec) { return rec.is_object() && rec.value("status", std::string()) == "ok"; }

ojson read_results_file(const std::string& path, const std::string& verb, const std::string& hint) {
  const std::string text = read_text_file(path);
  if (const std::string deep = json_depth_error(text, path); !deep.empty()) throw Error(deep + "; cannot " + verb + hint);
  ojson doc = ojson::parse(text, nullptr, false);
  if (doc.is_discarded()) throw Error(path + ": cannot " + verb + ", the results file is not valid JSON" + hint);
  if (!doc.is_object() || doc.value("schema_version", 0) != kSchemaVersion || !doc.contains("runs") || !doc["runs"].is_array())
    throw Error(path + ": cannot " + verb + ", not a schema_version " + std::to_string(kSchemaVersion) + " results file" + hint);
  return doc;
}

ResultsSession::ResultsSession(const fs::path& dir, const std::string& stem, const std::string& command)
    : dir_(dir),
      remove_dir_(!fs::exists(dir)),
      json_path_((dir / (stem + ".json")).string()),
      journal_path_(json_path_ + ".journal") {
  lock_.emplace(json_path_, command);
  remove_stale_temp_files(dir_.string(), stem);
}

ResultsSession::~ResultsSession() {
  journal_.reset();
  lock_.reset();
  std::error_code ec;
  if (remove_dir_ && fs::is_empty(dir_, ec)) fs::remove(dir_, ec);
}

ojson ResultsSession::read_for_render() const {
  if (!fs::exists(json_path_)) throw Error(json_path_ + ": no results file to render (--render; --out names the folder)");
  return read_results_file(json_path_, "render", "");
}

void ResultsSession::open(ojson doc, bool resume, bool quiet) {
  doc_ = std::move(doc);
  resume_ = resume;
  quiet_ = quiet;
  if (resume) {
    continue_from_before();
  } else if (fs::exists(journal_path_) && !quiet) {
    std::fprintf(stderr, "run_experiment: %s: an earlier invocation did not finish; this run starts over "
                         "(--resume would continue it)\n", journal_path_.c_str());
  }
}

void ResultsSession::continue_from_before() {
  journal_base_ = "file";
  std::optional<JournalContents> journal;
  if (fs::exists(journal_path_)) journal = read_journal(journal_path_);
  const bool file_counts = !journal || journal->header.value("base", std::string()) == "file";
  ojson old;
  if (file_counts && fs::exists(json_path_)) old = read_results_file(json_path_, "resume", "; move it away or run without --resume");
  // The provenance chain: the unfinished invocation's (which holds the file's), else the file's.
  const ojson* last = journal ? &journal->header["document"] : old.is_object() ? &old : nullptr;
  if (last && last->contains("provenance") && (*last)["provenance"].is_object())
    doc_["provenance"]["previous"] = provenance_chain(*last);
  if (old.is_object())
    for (const auto& r : old["runs"]) add_run(r);
  if (journal) {
    for (const auto& r : journal->records) add_run(r);
    carried_ = journal->records;
    journal_base_ = file_counts ? "file" : "none";
  }
}

void ResultsSession::add_run(const ojson& r) {
  const std::string id = run_identity_of_record(r);
  auto it = id.empty() ? index_.end() : index_.find(id);
  if (it != index_.end()) {
    doc_["runs"][it->second] = r;
  } else {
    if (!id.empty()) index_[id] = doc_["runs"].size();
    doc_["runs"].push_back(r);
  }
}

bool ResultsSession::has_ok_run(const std::string& identity) const {
  auto it = index_.find(identity);
  return it != index_.end() && record_ok(doc_["runs"][it->second]);
}

std::string ResultsSession::kept_run_with_output(const std::string& path) const {
  for (const auto& r : doc_["runs"]) {
    if (!record_ok(r) || !r.contains("outputs") || !r["outputs"].is_array()) continue;
    for (const auto& f : r["outputs"])
      if (f.is_string() && f.get<std::string>() == path) return run_identity_of_record(r);
  }
  return "";
}

void ResultsSession::record(const ojson& rec) {
  add_run(rec);
  if (!journal_) {
    ojson header = {{"journal", "gpudm-results-journal"}, {"version", 1}, {"base", journal_base_}};
    ojson head = doc_;
    head.erase("runs");
    header["document"] = std::move(head);
    journal_.emplace(journal_path_, header, carried_);
  }
  journal_->append(rec);
}

void ResultsSession::commit() {
  write_file_atomic(json_path_, dump_results(doc_));
  if (journal_) journal_->remove();
  else if (resume_) fs::remove(journal_path_);  // folded into the file just written
}

}  // namespace gpudm::experiments
