#pragma once
// A DatasetProvider over plain CSV regression files named by path (the GMT learner's and the
// Weka study's format, algorithms/gmt/csv.hpp; read by load_regression_csv): what gmt_learner
// (tools/) and the GMT CLI tests hand the family. {"rows": n} keeps the first n rows.
#include <memory>
#include <string>

#include "algorithms/core/family.hpp"

namespace gpudm::datasets {

class RegressionCsvFiles final : public DatasetProvider {
 public:
  std::shared_ptr<const Dataset> get(const std::string& path, const nlohmann::json& options) override;
};

}  // namespace gpudm::datasets
