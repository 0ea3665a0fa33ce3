#!/usr/bin/env bash
# Installs gpuspy's build and test dependencies from Debian 12 packages (run as root).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build ccache pkg-config git python3 python3-yaml \
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler \
  libabsl-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev libcpp-httplib-dev \
  libsqlite3-dev zlib1g-dev libzstd-dev libre2-dev libsimdjson-dev libdeflate-dev \
  libpq-dev libssl-dev postgresql prometheus gnuplot-nox \
  libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev \
  chromium fonts-dejavu-core \
  shellcheck patchelf >/dev/null
# The web viewer's browser tests: node (the machine's own when it has one, else Debian's) and
# playwright-core from the lock file, which drives Debian's Chromium and downloads no browser.
if ! command -v npm >/dev/null; then
  apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
(cd "$(dirname "$0")/../tests/browser" &&
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
echo "install-deps: done"
