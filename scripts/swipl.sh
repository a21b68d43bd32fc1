#!/usr/bin/env bash
# Make a SWI-Prolog that janus-swi can bind to (>= 9.1.12) and print its
# prefix (the directory holding bin/swipl) on standard output.
#
# In order of preference:
#   1. the `swipl` on PATH, when it is new enough;
#   2. the project's own build from an earlier run (see 4);
#   3. Debian's package swi-prolog-nox, installed with apt-get, when the
#      candidate apt offers is new enough (Debian 13 "trixie" and later);
#   4. SWI-Prolog 9.2.9 built from Debian's source tarball into a prefix the
#      project owns, by default ~/.cache/epsparql/swipl-9.2.9 (shared by every
#      clone of the repository; EPSPARQL_SWIPL_PREFIX overrides it), when the
#      system offers nothing new enough (Debian 12 ships 9.0.4).
# Nothing of the system's SWI-Prolog or apt configuration is changed by 4.
# Safe to run again: a finished build is recognised by its stamp file and
# reused.  Progress goes to standard error.
set -euo pipefail

VERSION=9.2.9
MIN_VERSION=90112                      # janus-swi needs 9.1.12
URL="http://deb.debian.org/debian/pool/main/s/swi-prolog/swi-prolog_${VERSION}+dfsg.orig.tar.gz"
SHA256=6d6f2dd6e4558bccb7c87cc7a5cbcf582503384a5fa890efba0ae91a0aaf2258
PREFIX="${EPSPARQL_SWIPL_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/epsparql/swipl-$VERSION}"

say() { echo "swipl: $*" >&2; }

# 1. A system SWI-Prolog that is new enough.
if command -v swipl >/dev/null 2>&1; then
    v=$(swipl -g 'current_prolog_flag(version,V),write(V),nl' -t halt 2>/dev/null || echo 0)
    if [ "${v:-0}" -ge "$MIN_VERSION" ]; then
        # the directory above the bin/ that holds `swipl` (not resolving the
        # link: Debian's /usr/bin/swipl points into /usr/lib/swi-prolog)
        dirname "$(dirname "$(command -v swipl)")"
        exit 0
    fi
fi

# 2. The project's own build, when finished earlier.
if [ -f "$PREFIX/.epsparql-built" ] && [ -x "$PREFIX/bin/swipl" ]; then
    echo "$PREFIX"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# 3. Debian's package, when apt offers a new enough one.
candidate() { apt-cache policy swi-prolog-nox 2>/dev/null | sed -n 's/^ *Candidate: *//p'; }
if command -v apt-get >/dev/null 2>&1; then
    cand=$(candidate)
    if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
        $SUDO apt-get update -qq >/dev/null 2>&1 || true
        cand=$(candidate)
    fi
    if [ -n "$cand" ] && [ "$cand" != "(none)" ] \
        && dpkg --compare-versions "$cand" ge 9.1.12; then
        say "installing Debian's swi-prolog-nox $cand"
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq swi-prolog-nox >/dev/null
        echo /usr
        exit 0
    fi
fi

# 4. Build it.
deps=(cmake ninja-build gcc g++ make curl libgmp-dev zlib1g-dev libssl-dev
      libreadline-dev libpcre2-dev libyaml-dev libarchive-dev libncurses-dev
      libedit-dev uuid-dev ca-certificates)
missing=()
for p in "${deps[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    say "installing build dependencies: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say "downloading SWI-Prolog $VERSION source (Debian's tarball)"
curl -sSfL -o "$work/swipl.tar.gz" "$URL"
echo "$SHA256  $work/swipl.tar.gz" | sha256sum -c --quiet -
tar -xzf "$work/swipl.tar.gz" -C "$work"
src=$(find "$work" -maxdepth 1 -mindepth 1 -type d | head -1)

say "building SWI-Prolog $VERSION into $PREFIX (about 2 minutes on 2 cores)"
rm -rf "$PREFIX"
mkdir -p "$work/build"
(
    cd "$work/build"
    cmake -G Ninja "$src" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
        -DSWIPL_PACKAGES_X=OFF -DSWIPL_PACKAGES_JAVA=OFF -DSWIPL_PACKAGES_ODBC=OFF \
        -DSWIPL_PACKAGES_BDB=OFF -DSWIPL_PACKAGES_QT=OFF \
        -DINSTALL_DOCUMENTATION=OFF -DBUILD_TESTING=OFF >"$work/cmake.log" 2>&1 \
        || { tail -40 "$work/cmake.log" >&2; exit 1; }
    ninja >"$work/ninja.log" 2>&1 || { tail -40 "$work/ninja.log" >&2; exit 1; }
    ninja install >"$work/install.log" 2>&1 || { tail -40 "$work/install.log" >&2; exit 1; }
)
"$PREFIX/bin/swipl" -g 'use_module(library(pcre)),use_module(library(sha)),use_module(library(http/json)),use_module(library(janus))' -t halt
touch "$PREFIX/.epsparql-built"
echo "$PREFIX"
