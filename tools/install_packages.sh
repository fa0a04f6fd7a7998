#!/usr/bin/env bash
# Installs the Debian packages named as arguments that are missing: apt runs only when one is, so
# every build script can call this on each run. Used by tools/bootstrap.sh, tools/sanitize.sh and tools/fuzz.sh.
#   tools/install_packages.sh clang libomp-dev
set -euo pipefail

missing=()
for p in "$@"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
((${#missing[@]})) || exit 0
echo "leangrad: installing ${missing[*]}"
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
