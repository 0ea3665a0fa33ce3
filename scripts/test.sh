#!/usr/bin/env bash
# Builds gpuspy and runs the whole test suite with ctest.
#   scripts/test.sh              Release build in build/, every test
#   SANITIZE=1 scripts/test.sh   ASan+UBSan build in build-asan/, unit tests
#   TSAN=1 scripts/test.sh       TSan build in build-tsan/, unit tests
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${SANITIZE:-0}" == 1 ]]; then
  dir=build-asan; args=(-DGPUSPY_SANITIZE=ON); label=(-L unit)
elif [[ "${TSAN:-0}" == 1 ]]; then
  dir=build-tsan; args=(-DGPUSPY_TSAN=ON); label=(-L unit)
else
  dir=build; args=(); label=()
fi
scripts/build.sh "$dir" "${args[@]}"
cd "$dir"
ctest --output-on-failure -j"${JOBS:-$(nproc)}" "${label[@]}"
