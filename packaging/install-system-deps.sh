#!/usr/bin/env bash
# Installs the Debian packages Qt needs (xcb platform plugin, EGL/GL, fonts), Xvfb for
# screenshot tests, and bubblewrap, the sandbox that kernels, references and compilers run in
# (see docs/isolation.md). Installs only what is missing; says what to do when it cannot.
set -u
packages=(libxcb-cursor0 libxkbcommon0 libxkbcommon-x11-0 libxcb-icccm4 libxcb-image0
  libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1
  libegl1 libgl1 libopengl0 libfontconfig1 libdbus-1-3 libglib2.0-0 fonts-dejavu-core xvfb xauth
  bubblewrap)
# `--test`: also what only the tests need (headless Chromium renders the HTML reports).
[ "${1:-}" = "--test" ] && packages+=(chromium)
command -v dpkg >/dev/null 2>&1 || { echo "not a Debian-like system: install Qt's xcb, EGL and font libraries yourself"; exit 0; }
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
  echo "missing system packages: ${missing[*]}; ask an administrator to install them"; exit 0
fi
echo "installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
  || echo "could not install ${missing[*]}: the GUI may not start, and without bubblewrap only specs you trusted (kernel-studio trust) are verified; the rest of the CLI still works"
