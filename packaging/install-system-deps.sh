#!/usr/bin/env bash
# Installs, from the network, the Debian packages of debian-packages.txt (Qt's xcb platform
# plugin, EGL/GL, fonts; g++ for the CPU backend; python3-venv; bubblewrap, the sandbox that
# kernels, references and compilers run in, see docs/isolation.md) plus Xvfb for screenshots.
# Installs only what is missing; says what to do when it cannot. Offline machines get the same
# packages from a bundle instead (install.sh BUNDLE --system-only).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mapfile -t packages < <(sed 's/#.*//; /^[[:space:]]*$/d' "$here/debian-packages.txt")
packages+=(xvfb xauth)
# `--test`: also what only the tests need (headless Chromium renders the HTML reports).
[ "${1:-}" = "--test" ] && packages+=(chromium)
command -v dpkg >/dev/null 2>&1 || { echo "not a Debian-like system: install Qt's xcb, EGL and font libraries, g++ and bubblewrap yourself"; exit 0; }
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
  || echo "could not install ${missing[*]}: the GUI may not start, without g++ a machine with no GPU cannot verify, and without bubblewrap only specs you trusted (kernel-studio trust) are verified; the rest of the CLI still works"
