#!/usr/bin/env bash
# Setup for tests/test_browser.py on a Debian machine: Debian's `chromium` package (plus a font, so the
# screenshot is readable) and Playwright for Python, which drives that chromium through
# `executable_path`. It never runs `playwright install`: that downloads browsers from the internet.
#
# Idempotent (skips what is already there) and never fails: where something cannot be installed it
# prints why and exits 0, so CI goes on and the browser test skips with its own reason.
set -u

PYTHON="${PYTHON:-python3}"
say() { echo "browser_setup: $*"; }

apt_packages=()
command -v chromium >/dev/null 2>&1 || apt_packages+=(chromium)
dpkg -s fonts-dejavu-core >/dev/null 2>&1 || apt_packages+=(fonts-dejavu-core)

if [ "${#apt_packages[@]}" -eq 0 ]; then
  say "chromium and fonts-dejavu-core already installed"
elif ! command -v apt-get >/dev/null 2>&1; then
  say "no apt-get here: not installing ${apt_packages[*]} (the browser test will skip)"
elif [ "$(id -u)" != 0 ]; then
  say "not root: not installing ${apt_packages[*]} (the browser test will skip)"
else
  say "installing ${apt_packages[*]}"
  if ! out=$( (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${apt_packages[@]}") 2>&1 ); then
    say "apt-get failed, the browser test will skip:"
    printf '%s\n' "$out" | tail -n 5
  fi
fi

if "$PYTHON" -c "import playwright.sync_api" >/dev/null 2>&1; then
  say "playwright (Python) already installed"
elif ! out=$("$PYTHON" -m pip install -q playwright 2>&1); then
  say "pip install playwright failed, the browser test will skip:"
  printf '%s\n' "$out" | tail -n 5
fi

if command -v chromium >/dev/null 2>&1; then
  say "$(chromium --version 2>/dev/null || echo 'chromium: version unknown')"
fi
exit 0
