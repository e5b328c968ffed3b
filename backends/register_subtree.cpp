// Registers the subtree family's TreeInterpreter backends (unavailable ones with the reason).
#include "algorithms/subtree/backends.hpp"
#include "backends/register.hpp"

namespace gpudm {

void register_subtree(Registry& r) {
  using subtree::TreeInterpreter;
  r.add<TreeInterpreter>("subtree", "sequential", [] { return backend::sequential::make_subtree_interpreter(); });
#ifdef GPUDM_HAVE_OPENMP
  r.add<TreeInterpreter>("subtree", "openmp", [] { return backend::openmp::make_subtree_interpreter(); });
#else
  r.add_unavailable("subtree", "openmp", openmp_missing_reason());
#endif
#ifdef GPUDM_HAVE_CUDA
  if (const std::string why = cuda_missing_reason(); why.empty())
    r.add<TreeInterpreter>("subtree", "cuda", [] { return backend::cuda::make_subtree_interpreter(); });
  else
    r.add_unavailable("subtree", "cuda", why);
#else
  r.add_unavailable("subtree", "cuda", cuda_missing_reason());
#endif
}

}  // namespace gpudm
