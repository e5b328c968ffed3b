// Registers the subtree family's TreeInterpreter backends (unavailable ones with the reason).
#include "backends/subtree.hpp"
#include "backends/register.hpp"

namespace gpudm {

void register_subtree(Registry& r) {
  using subtree::TreeInterpreter;
  r.add<TreeInterpreter>("subtree", "sequential", [] { return backend::sequential::make_subtree_interpreter(); }, Registry::Role::reference);
  GPUDM_ADD_OPENMP(r, TreeInterpreter, "subtree", backend::openmp::make_subtree_interpreter);
  GPUDM_ADD_CUDA(r, TreeInterpreter, "subtree", backend::cuda::make_subtree_interpreter);
}

}  // namespace gpudm
