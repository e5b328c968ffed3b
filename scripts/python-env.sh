#!/usr/bin/env bash
# The project's Python environment, .venv at the repository root: Debian's python3 with its
# numpy / scikit-learn / pandas / pytest (system site packages) and the package's pinned,
# hash-checked build tools from PyPI (python/requirements-build.txt). Idempotent: a venv whose
# tools match the requirements file is left as it is. Prints nothing when nothing changes.
# scripts/build.sh then builds the gpudm module against it and points the venv at
# <build>/python, so `.venv/bin/python -c "import gpudm"` works.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${GPUDM_VENV:-$ROOT/.venv}"
REQ="$ROOT/python/requirements-build.txt"
STAMP="$VENV/.gpudm-requirements.sha256"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; then exit 0; fi
echo "python-env: $VENV (Debian's python3 + the pinned build tools of python/requirements-build.txt)" >&2
# Without PyPI the rest of the project still builds and tests: the Python package is then skipped
# (the configure log and the python.pytest test say why), never half made.
if /usr/bin/python3 -m venv --system-site-packages "$VENV" &&
   "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-cache-dir --retries 1 --timeout 20 --require-hashes --no-deps \
     --only-binary=:all: -r "$REQ"; then
  echo "$want" > "$STAMP"
else
  echo "python-env: could not make $VENV with python/requirements-build.txt (no PyPI?): the Python package will not be built" >&2
fi
