#!/usr/bin/env bash
# The Debian packages the tests drive, installed once (a no-op when present): Emacs with
# eglot (tests/server/test_emacs.py), and for the VS Code end-to-end test Debian's
# chromium and the Kerberos headers code-server's native build needs. One apt-get update
# for all of them. Needs root or sudo; without apt-get it says what is missing and the
# tests that need it are skipped.
set -euo pipefail
PACKAGES=(emacs-nox elpa-eglot chromium libkrb5-dev)
missing=()
for package in "${PACKAGES[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null; then
  echo "system-packages: no apt-get; not installed: ${missing[*]}" >&2
  exit 0
fi
SUDO=
if [ "$(id -u)" != 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "system-packages: not root and no sudo; not installed: ${missing[*]}" >&2
    exit 0
  fi
  SUDO=sudo
fi
echo "system-packages: apt-get install ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
