#!/usr/bin/env bash
# Installs the system's headless Chromium and its driver for the web page's browser tests
# (tests/web/test_browser.py), when absent. Nothing else downloads a browser: the tests drive
# /usr/bin/chromium through Playwright's Python package (never `playwright install`).
#
#   bash ops/install_chromium.sh      (CI calls it before ops/test.sh; without root or apt
#                                      it says why and exits 0: the browser tests then skip)
set -uo pipefail
if [ -x /usr/bin/chromium ]; then
  echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo present)"
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "chromium: not installed and not root; the browser tests will skip (as root: apt-get install -y chromium chromium-driver)"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium: not installed and apt-get is not available; the browser tests will skip"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; then
  echo "chromium: installed $(/usr/bin/chromium --version 2>/dev/null)"
else
  echo "chromium: apt-get could not install it; the browser tests will skip"
fi
exit 0
