#pragma once
#include <memory>

#include "algorithms/gmt/evaluator.hpp"

namespace gpudm::backend::openmp {
std::unique_ptr<gmt::ModelTreeEvaluator> make_gmt_evaluator();
}
