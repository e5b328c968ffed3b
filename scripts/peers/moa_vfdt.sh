#!/usr/bin/env bash
# MOA as the live peer of the vfdt tables: gets MOA's jar reproducibly, then runs
# scripts/peers/moa_vfdt.py with it (every argument goes to moa_vfdt.py; see its --help).
#
#   scripts/peers/moa_vfdt.sh [--fetch-only] [moa_vfdt.py arguments...]
#
# The jar is capymoa/jar/moa.jar of the capymoa wheel on PyPI, at the version and sha256 pinned in
# scripts/peers/moa.sha256 (the jar's sha256 is pinned there too). The wheel is downloaded once
# with pip in hash-checking mode (--require-hashes, no dependencies, binary only) into the cache,
# ${MOA_CACHE:-~/.cache/gpudm/moa}/wheels, and the jar is extracted to
# ${MOA_CACHE}/capymoa-<version>/moa.jar; nothing else is fetched, and nothing at all once the jar
# is cached. The jar runs on the system's Java (Debian: default-jre-headless; MOA's classes are
# Java 8 bytecode); --fetch-only prints the jar's path and stops.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PINS="$HERE/moa.sha256"
CACHE="${MOA_CACHE:-$HOME/.cache/gpudm/moa}"
PY="${PYTHON:-python3}"

pin() { awk -v n="$1" '$0 !~ /^#/ && $2 == n { print $1 }' "$PINS"; }
WHEEL="$(awk '$0 !~ /^#/ && $2 ~ /\.whl$/ { print $2 }' "$PINS")"
WHEEL_SHA="$(pin "$WHEEL")"
JAR_SHA="$(pin moa.jar)"
VERSION="$(echo "$WHEEL" | cut -d- -f2)"
if [ -z "$WHEEL" ] || [ -z "$WHEEL_SHA" ] || [ -z "$JAR_SHA" ] || [ -z "$VERSION" ]; then
  echo "moa_vfdt.sh: $PINS must pin the capymoa wheel and moa.jar" >&2
  exit 1
fi
JAR="$CACHE/capymoa-$VERSION/moa.jar"

sha() { sha256sum "$1" | cut -d' ' -f1; }

if [ ! -f "$JAR" ] || [ "$(sha "$JAR")" != "$JAR_SHA" ]; then
  mkdir -p "$CACHE/wheels" "$CACHE/capymoa-$VERSION"
  WHL="$CACHE/wheels/$WHEEL"
  if [ ! -f "$WHL" ] || [ "$(sha "$WHL")" != "$WHEEL_SHA" ]; then
    rm -f "$WHL"
    REQ="$(mktemp)"
    trap 'rm -f "$REQ"' EXIT
    echo "capymoa==$VERSION --hash=sha256:$WHEEL_SHA" > "$REQ"
    echo "moa_vfdt.sh: downloading $WHEEL (pinned sha256 $WHEEL_SHA)" >&2
    "$PY" -m pip download --require-hashes --no-deps --only-binary=:all: --no-cache-dir \
      -r "$REQ" -d "$CACHE/wheels" >&2
  fi
  # pip checked the hash while downloading; checked again here for a wheel already in the cache
  if [ "$(sha "$WHL")" != "$WHEEL_SHA" ]; then
    echo "moa_vfdt.sh: $WHL: sha256 $(sha "$WHL"), pinned $WHEEL_SHA" >&2
    exit 1
  fi
  TMPJAR="$JAR.tmp.$$"
  "$PY" - "$WHL" "$TMPJAR" <<'EOF'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("capymoa/jar/moa.jar") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
EOF
  if [ "$(sha "$TMPJAR")" != "$JAR_SHA" ]; then
    echo "moa_vfdt.sh: moa.jar in $WHEEL: sha256 $(sha "$TMPJAR"), pinned $JAR_SHA" >&2
    rm -f "$TMPJAR"
    exit 1
  fi
  mv "$TMPJAR" "$JAR"
fi
echo "$JAR"
if [ "${1:-}" = "--fetch-only" ]; then
  exit 0
fi
if ! command -v "${JAVA:-java}" >/dev/null; then
  echo "moa_vfdt.sh: no java (Debian: apt-get install default-jre-headless)" >&2
  exit 1
fi
exec "$PY" "$HERE/moa_vfdt.py" --jar "$JAR" "$@"
