#!/usr/bin/env bash
# Installs gpuspy's dependencies from Debian 12 packages (run as root).
#   scripts/install-deps.sh           what building and running gpuspy need: the compilers and the
#                                     -dev packages of the libraries it links (README command 1)
#   scripts/install-deps.sh --tests   that, plus what only the tests use: GoogleTest, Benchmark,
#                                     clang (sanitizers, fuzzers), PostgreSQL and Prometheus
#                                     servers, Chromium and node for the browser tests, the deploy
#                                     checks' tools (README command 2, CI)
set -euo pipefail
tests=0
for arg in "$@"; do
  case $arg in
    --tests) tests=1 ;;
    *) echo "install-deps.sh: unknown argument '$arg' (see the comment at the top)" >&2; exit 2 ;;
  esac
done
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build ccache pkg-config \
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler \
  libabsl-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev libcpp-httplib-dev \
  libsqlite3-dev zlib1g-dev libzstd-dev libre2-dev libsimdjson-dev libdeflate-dev libisal-dev \
  libpq-dev libssl-dev >/dev/null
if [[ $tests == 0 ]]; then
  echo "install-deps: done (the build and run dependencies, --tests adds the test-only ones)"
  exit 0
fi
apt-get install -y -qq --no-install-recommends \
  git python3 python3-yaml \
  libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev \
  postgresql prometheus gnuplot-nox \
  chromium fonts-dejavu-core \
  shellcheck patchelf >/dev/null
# The web viewer's browser tests: node (the machine's own when it has one, else Debian's) and
# playwright-core from the lock file, which drives Debian's Chromium and downloads no browser.
if ! command -v npm >/dev/null; then
  apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
(cd "$(dirname "$0")/../tests/browser" &&
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
echo "install-deps: done (with the test-only dependencies)"
