#!/usr/bin/env bash
# install_packages PKG...: installs the Debian packages of the list that are missing (apt runs only
# then, with sudo when not root). Sourced by tools/bootstrap.sh and the other set-up scripts.
install_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "leangrad: installing ${missing[*]}"
  local sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
}
