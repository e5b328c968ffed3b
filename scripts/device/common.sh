# Sourced by the scripts/device/*.sh area scripts (after ROOT is set): what every one of them
# resolves the same way.
#   BUILD            the CUDA build folder (default $ROOT/build-device; relative to ROOT if relative)
#   GPUDM_DATA_DIR   when unset: shared/datasets beside or above the tree, where present (the GPU
#                    machine's copy has none: carry datasets/cache, which the catalog searches too)
BUILD="${BUILD:-$ROOT/build-device}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
if [ -z "${GPUDM_DATA_DIR:-}" ]; then
  for d in "$ROOT/shared/datasets" "$ROOT/../shared/datasets"; do
    [ -d "$d" ] && export GPUDM_DATA_DIR="$(cd "$d" && pwd)" && break
  done
fi
