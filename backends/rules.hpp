#pragma once
// Factories of the rule engine's backends (algorithms/rules/evaluator.hpp), defined under
// backends/<kind>/ and registered by backends/register_rules.cpp.
#include <memory>

#include "algorithms/rules/evaluator.hpp"

namespace gpudm::backend::sequential {
std::unique_ptr<rules::RuleEvaluator> make_rule_evaluator();
}
namespace gpudm::backend::openmp {
std::unique_ptr<rules::RuleEvaluator> make_rule_evaluator();
}
namespace gpudm::backend::cuda {
std::unique_ptr<rules::RuleEvaluator> make_rule_evaluator();
}
