#!/usr/bin/env bash
# Installs the Debian packages gpudm needs that are missing. Idempotent; silent when
# nothing is missing. Needs root (or sudo) only when something must be installed.
set -euo pipefail

PACKAGES=(build-essential cmake git pkg-config nlohmann-json3-dev libgtest-dev libbenchmark-dev
          libbenchmark-tools libeigen3-dev libcli11-dev zlib1g-dev python3 python3-matplotlib
          python3-scipy python3-numpy clang libclang-rt-dev libopenmpi-dev openmpi-bin ccache
          python3-dev python3-venv python3-sklearn python3-pandas python3-pytest python3-pathspec)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# OpenMP: libgomp comes with g++; nothing to add. libopenmpi-dev + openmpi-bin: the multi-rank runs and their `mpi` tests.
# clang + libclang-rt-dev: the libFuzzer targets (scripts/fuzz.sh).
# python3-dev/-venv/-sklearn/-pandas/-pytest/-pathspec: the Python package (python/; scripts/python-env.sh).
# ccache: rebuilds of one build folder (scripts/configure-once.sh, the perf gate's two builds).

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ ${#missing[@]} -eq 0 ]; then "$ROOT/scripts/python-env.sh"; exit 0; fi

if ! command -v apt-get >/dev/null; then
  echo "install-deps: missing packages (${missing[*]}) and no apt-get here; install them by hand" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "install-deps: missing packages (${missing[*]}); run as root to install them" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
"$ROOT/scripts/python-env.sh"
