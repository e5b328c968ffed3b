#include "datasets/csv_files.hpp"

#include "algorithms/core/error.hpp"
#include "datasets/loaders.hpp"

namespace gpudm::datasets {

std::shared_ptr<const Dataset> RegressionCsvFiles::get(const std::string& path, const nlohmann::json& options) {
  GPUDM_REQUIRE(path.size() > 4 && path.compare(path.size() - 4, 4, ".csv") == 0,
                "dataset '" + path + "': this tool reads .csv files (a header row, the target last)");
  Dataset d = load_regression_csv(path);
  const long long rows = options.is_object() ? options.value("rows", 0LL) : 0LL;
  if (rows > 0 && static_cast<std::size_t>(rows) < d.rows()) d = d.slice(0, static_cast<std::size_t>(rows));
  return std::make_shared<const Dataset>(std::move(d));
}

}  // namespace gpudm::datasets
