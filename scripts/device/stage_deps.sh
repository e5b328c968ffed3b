#!/usr/bin/env bash
# Stages the build dependencies the GPU machine's image lacks (it has nvcc, CMake and ninja but
# no Debian -dev packages, and nothing can be fetched there) into .deps/ at the repository root,
# copied from this machine's installed packages (scripts/install-deps.sh installs them):
#   nlohmann-json3-dev libcli11-dev libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev
#   libbenchmark1debian zlib1g-dev            (~14 MB; .deps/ is added to .git/info/exclude)
# Then pass ".deps.tar.xz" (or ".deps") in the device tool's `carry` list; scripts/device/run_all.sh finds it and adds
# it to CMAKE_PREFIX_PATH / LD_LIBRARY_PATH. Run here, before the device call:
#   scripts/device/stage_deps.sh [--mpi]   (also adds /.deps/ to .git/info/exclude so git ignores it)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEST="$ROOT/.deps"
PKGS="nlohmann-json3-dev libcli11-dev libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian zlib1g-dev zlib1g"
# --mpi: Open MPI too (the runs across ranks; the image has none), ~20 MB without its
# Fortran and Java parts. The copy lives under .deps/usr: run_all.sh exports OPAL_PREFIX for it
# (Open MPI's relocation) and puts .deps/usr/bin on PATH (relocation checked here: mpicxx --showme
# names the carried include folder, mpirun -np 2 runs).
if [ "${1:-}" = --mpi ]; then
  PKGS="$PKGS libopenmpi3 libopenmpi-dev openmpi-bin openmpi-common libpmix2 libhwloc15 libhwloc-plugins libevent-core-2.1-7
        libevent-pthreads-2.1-7 libfabric1 libucx0 libpsm2-2 libpsm-infinipath1 libibverbs1 librdmacm1 libnl-3-200
        libnl-route-3-200 libnuma1 libxnvctrl0"
fi
rm -rf "$DEST"
mkdir -p "$DEST"
for p in $PKGS; do
  if ! dpkg -s "$p" >/dev/null 2>&1; then
    echo "stage_deps: $p is not installed here (run scripts/install-deps.sh)" >&2
    exit 1
  fi
  dpkg -L "$p" | while read -r f; do
    case "$f" in /usr/share/doc/*|/usr/share/man/*|/usr/share/lintian/*|*fortran*|*/mpi*.mod|*/*mpif*|*java*|*.jar) continue ;; esac
    if [ -f "$f" ] || [ -L "$f" ]; then
      mkdir -p "$DEST$(dirname "$f")"
      cp -a "$f" "$DEST$f"
    fi
  done
done
# Absolute symlinks (e.g. libz.so -> /lib/...) would point outside the carried prefix: replace
# them with a copy of their target.
find "$DEST" -type l | while read -r l; do
  case "$(readlink "$l")" in /*) cp -L --remove-destination "$(readlink -f "$l")" "$l" ;; esac
done
# Debian names Open MPI's programs through /etc/alternatives (mpirun -> mpirun.openmpi): give the
# copy the plain names, which FindMPI and mpirun users look for.
if [ -e "$DEST/usr/bin/mpirun.openmpi" ]; then
  for n in mpirun mpiexec mpicc mpicxx mpic++; do
    [ -e "$DEST/usr/bin/$n.openmpi" ] && ln -sf "$n.openmpi" "$DEST/usr/bin/$n"
  done
fi
EXCLUDE="$(git -C "$ROOT" rev-parse --git-path info/exclude)"
case "$EXCLUDE" in /*) ;; *) EXCLUDE="$ROOT/$EXCLUDE" ;; esac
mkdir -p "$(dirname "$EXCLUDE")"
grep -qx '/.deps/' "$EXCLUDE" 2>/dev/null || echo '/.deps/' >>"$EXCLUDE"
grep -qx '/.deps.tar.xz' "$EXCLUDE" 2>/dev/null || echo '/.deps.tar.xz' >>"$EXCLUDE"
# The device call carries at most 64 MiB with the tracked tree (~33 MB of results): with Open MPI
# .deps is ~38 MB, so a compressed copy (~7 MB) is what travels; common.sh unpacks it there.
tar -cJf "$ROOT/.deps.tar.xz" -C "$ROOT" .deps
echo "stage_deps: $(du -sh "$DEST" | cut -f1) in $DEST, $(du -sh "$ROOT/.deps.tar.xz" | cut -f1) packed (carry \".deps.tar.xz\" in the device call; \".deps\" itself also works without --mpi)"
