#!/usr/bin/env bash
# `npm run test:e2e`: installs code-server (cached), builds and packages the extension, then runs the end-to-end
# scenarios in real VS Code driven from Chromium. Missing Chromium or code-server is a failure here.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/e2e/install-code-server.sh >/dev/null
npm run build --silent
E2E_REPACKAGE=1 REQUIRE_E2E=1 node --import tsx --test --test-reporter=spec --test-concurrency=1 test/e2e/*.test.ts
