#!/usr/bin/env bash
# ctest's entry for the browser tests: installs playwright-core on first use (npm ci from the
# lock file; it downloads no browser: the tests drive Debian's /usr/bin/chromium), then runs the
# tests with node's own test runner.
set -euo pipefail
cd "$(dirname "$0")"
if [[ ! -f node_modules/playwright-core/package.json ]]; then
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
fi
exec node --test --test-reporter=spec viewer.test.mjs
