#!/bin/sh
# Builds the test-only chart renderer into OUT_DIR/render, offline, from
# Debian's Go packages: golang-go and golang-github-masterminds-sprig-dev
# (which brings sprig's dependencies) and golang-gopkg-yaml.v3-dev, all under
# /usr/share/gocode. GOPATH mode needs no module download; the two "/v3"
# import paths sprig's code uses are linked to Debian's unversioned folders.
#   build.sh OUT_DIR
set -eu
[ $# -eq 1 ] || { echo "usage: build.sh OUT_DIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")" && pwd)
gocode=/usr/share/gocode/src
command -v go >/dev/null || { echo "build.sh: go is missing (apt-get install golang-go; scripts/install-deps.sh does)" >&2; exit 1; }
[ -d "$gocode/github.com/Masterminds/sprig" ] || { echo "build.sh: sprig is missing (apt-get install golang-github-masterminds-sprig-dev)" >&2; exit 1; }

gopath="$out/gopath"
mkdir -p "$gopath/src/github.com/Masterminds/sprig" "$gopath/src/github.com/Masterminds/semver"
ln -sfn "$gocode/github.com/Masterminds/sprig" "$gopath/src/github.com/Masterminds/sprig/v3"
ln -sfn "$gocode/github.com/Masterminds/semver" "$gopath/src/github.com/Masterminds/semver/v3"
cd "$src"
GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" GOCACHE="$out/gocache" GOFLAGS='' \
  go build -p 1 -o "$out/render" .
