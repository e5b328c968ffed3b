#pragma once
// The one tokenizer of delimited text: the dataset loaders' rows (csv, tsv, whitespace, ARFF and
// KEEL lines) and the runner's CSV tables (experiments/text.cpp, RFC 4180) split lines here.
//
// A field that starts with a quote is quoted when its closing quote ends the field (the delimiter
// or the end of the line follows, blanks aside when trimming; with delim 0 the closing quote ends
// it): it is returned without its quotes, and inside it a doubled quote stands for one (RFC 4180:
// "say ""hi""" is `say "hi"`). Anything else is returned as it stands, with a status that says why
// (a data file's stray quote is data; a table's is an error).
#include <string>
#include <string_view>
#include <vector>

namespace gpudm::datasets {

struct FieldSyntax {
  char delim = ',';           // 0: fields are separated by runs of blanks
  bool trim = true;           // blanks (space, tab, CR, VT, FF) around a field are not part of it
  bool single_quotes = true;  // 'a b' quotes a field as "a b" does (ARFF, KEEL)
  bool strict = false;        // report a quote inside an unquoted field (stray_quote)

  // Data files: trimmed fields, ' or " quotes, stray quotes are data.
  static FieldSyntax data(char delim) { return FieldSyntax{delim, true, true, false}; }
  // RFC 4180 tables: fields as written, " quotes only, a stray quote is reported.
  static FieldSyntax rfc4180() { return FieldSyntax{',', false, false, true}; }
};

enum class FieldsStatus {
  ok,
  open_quote,   // a quoted field has no closing quote on this line (RFC 4180: it goes on on the next)
  stray_quote,  // with strict: a quote inside an unquoted field or after a closing quote
};

// Splits one line (without its line break) into `out`. Fields are views into `line`, or into
// `scratch` for quoted fields with doubled quotes: keep both alive while `out` is used (the next
// call may reuse scratch). The first problem found is returned; the fields are complete anyway.
FieldsStatus split_fields(std::string_view line, const FieldSyntax& syntax, std::vector<std::string_view>& out,
                          std::string& scratch);

}  // namespace gpudm::datasets
