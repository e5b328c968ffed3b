#pragma once
#include <memory>

#include "algorithms/pittsburgh/evaluator.hpp"

namespace gpudm::backend::sequential {
std::unique_ptr<pittsburgh::RuleSetEvaluator> make_pittsburgh_evaluator();
}
