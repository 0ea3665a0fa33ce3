#!/usr/bin/env bash
# Builds gpuspy and runs the whole test suite with ctest.
#   scripts/test.sh              Release build in build/, every test
#   SANITIZE=1 scripts/test.sh   ASan+UBSan build (clang) in build-asan/, unit tests
#   TSAN=1 scripts/test.sh       TSan build in build-tsan/, unit tests + the e2e tests labelled
#                                tsan (tests/e2e/CMakeLists.txt); fails on any TSan report
# A sanitizer stage builds only what its tests run (gpuspy_tests_<label>, tests/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tsan=0
if [[ "${SANITIZE:-0}" == 1 ]]; then
  dir=build-asan; label=(-L unit)
  VARIANT=asan TARGETS=gpuspy_tests_unit scripts/build.sh "$dir" -DGPUSPY_BUILD_TESTS=ON
elif [[ "${TSAN:-0}" == 1 ]]; then
  dir=build-tsan; label=(-L 'unit|tsan')
  tsan=1
  VARIANT=tsan TARGETS="gpuspy_tests_unit gpuspy_tests_tsan" scripts/build.sh "$dir" -DGPUSPY_BUILD_TESTS=ON
else
  dir=build; label=()
  # The tests are built only when asked (CMakeLists.txt); asking makes a missing GoogleTest an error.
  scripts/build.sh "$dir" -DGPUSPY_BUILD_TESTS=ON
fi
cd "$dir"
if [[ $tsan == 1 ]]; then
  # Every instrumented process the tests start (gpuspyd, the CLI, the fake training program with
  # the core) inherits these and writes its reports to tsan-reports/report.<pid>: a daemon's
  # stderr goes to a log in a temp dir that its test removes, and a SIGKILLed one has no exit
  # status to fail on. tests/tsan.supp says why each suppression (third-party code only) is there.
  reports=$PWD/tsan-reports
  rm -rf "$reports" && mkdir -p "$reports"
  export TSAN_OPTIONS="suppressions=$root/tests/tsan.supp log_path=$reports/report history_size=4 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
fi
status=0
ctest --output-on-failure -j"${JOBS:-$(nproc)}" "${label[@]}" || status=$?
if [[ $tsan == 1 ]] && compgen -G "$reports/report.*" >/dev/null; then
  found=("$reports"/report.*)
  cat "${found[@]}"
  echo "ThreadSanitizer: ${#found[@]} process(es) reported (above, and in $reports)" >&2
  status=1
fi
exit $status
