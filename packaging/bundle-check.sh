#!/usr/bin/env bash
# The end-to-end check of an offline install (make bundle-check; root, for `unshare -n`):
#  1. copies this checkout to a scratch source folder and builds a bundle there (CPU, or GPU with
#     VARIANT=gpu: make bundle-check-gpu), signed with a throwaway key;
#  2. renames the source folder, so nothing can lean on it;
#  3. installs the bundle inside `unshare -n` (no network interface but lo), with an empty
#     environment and a fresh home, into a prefix under that home;
#  4. from the installed app, still without network: doctor (must say ready), verify, compile
#     --sass, ask, gui --screenshot; checks that no file names the source folder; moves the
#     prefix and runs the doctor again; uninstalls. GPU: pycuda's extension must find libcurand
#     inside the prefix (ldd), and import where a driver is present.
# Sizes and times go to SCRATCH/summary.txt.  Environment: TORCH_FROM (where torch 2.13.0+cpu
# is: a folder or an index URL), VARIANT (cpu or gpu), BUNDLE_CHECK_DIR (scratch folder), PYTHON
# (builds the bundle).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
work=${BUNDLE_CHECK_DIR:-$(mktemp -d /tmp/ks-bundle-check.XXXXXX)}
torch_from=${TORCH_FROM:-https://download.pytorch.org/whl/cpu}
variant=${VARIANT:-cpu}
home=$work/home prefix=$work/home/opt/kernel-studio
mkdir -p "$work" "$home"
cd "$work"  # not the checkout: the installed app must not see its files
say() { echo; echo "== $*"; }
fail() { echo "bundle-check FAILED: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "run as root (unshare -n needs it)"

say "copy the source to $work/source"
mkdir -p "$work/source"
(cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$work/source")

say "build the $variant bundle"
start=$SECONDS
(cd "$work/source" && "$python" packaging/bundle_build.py --variant "$variant" \
  --out "$work/dist" --torch-from "$torch_from" --key "$work/signing.key") | tee "$work/build.log"
build_s=$((SECONDS - start))
bundle=$(ls "$work"/dist/kernel-studio-*-"$variant"-*.tar)
fingerprint=$(grep -A1 'fingerprint:' "$work/build.log" | tail -n 1 | xargs)
mv "$work/source" "$work/source-moved"

say "take the installer out of the bundle, as the README says"
mkdir -p "$work/installer"
tar -xf "$bundle" -C "$work/installer" --strip-components=1 --wildcards '*/install.sh' \
  '*/bundle_verify.py' '*/ed25519_verify.py'

offline() {  # a command with no network, an empty environment and the fresh home
  unshare -n env -i HOME="$home" PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"
}

say "install inside unshare -n"
start=$SECONDS
offline bash "$work/installer/install.sh" "$bundle" --prefix "$prefix" \
  --fingerprint "$fingerprint" | tee "$work/install.log"
install_s=$((SECONDS - start))

ks=$prefix/bin/kernel-studio
say "doctor"
offline "$ks" doctor | tee "$work/doctor.txt"
[ "$(tail -n 1 "$work/doctor.txt" | cut -c1-5)" = ready ] || fail "the doctor did not say ready"
resources=$(offline "$prefix/venv/bin/python" -c 'from app.base import paths; print(paths.RESOURCES)')
case "$resources" in "$prefix"/*) ;; *) fail "resources read from $resources" ;; esac
cp -r "$resources/kernels/vector_add" "$work/kernel"

if [ "$variant" = gpu ]; then
  say "pycuda's extension finds libcurand in the prefix; libcuda.so.1 is the driver's"
  driver=$(ls "$prefix"/venv/lib/python3*/site-packages/pycuda/_driver*.so)
  ldd "$driver" | grep -E 'libcurand|libcuda' | tee "$work/pycuda-ldd.txt"
  grep -q "libcurand.so.10 => $prefix/" "$work/pycuda-ldd.txt" || fail "libcurand not found"
  if ldconfig -p | grep -q 'libcuda.so.1 '; then
    offline "$prefix/venv/bin/python" -c 'import pycuda.driver as d; d.init(); print(d.Device(0).name())'
  else echo "(no NVIDIA driver here: libcuda.so.1 comes with it on a GPU machine)"; fi
fi

say "verify, compile --sass, ask, gui --screenshot"
offline "$ks" verify "$work/kernel/vector_add.toml"
offline "$ks" compile "$work/kernel/vector_add.cu" --sass | head -n 5
offline "$ks" ask "What does a bounds check in a CUDA kernel prevent?" --max-new-tokens 24
if command -v xvfb-run >/dev/null; then display=(xvfb-run -a); else
  display=(env QT_QPA_PLATFORM=offscreen); fi
offline "${display[@]}" "$ks" gui "$work/kernel/vector_add.toml" --screenshot "$work/gui.png"
[ -s "$work/gui.png" ] || fail "no screenshot"

say "nothing names the source folder; the prefix can move"
! grep -rlI "$work/source" "$prefix" | head -n 3 | grep . || fail "files name the source folder"
mv "$prefix" "$prefix-moved"
offline "$prefix-moved/bin/kernel-studio" doctor | tail -n 1 | grep -q '^ready' \
  || fail "the moved installation is not ready"
mv "$prefix-moved" "$prefix"

say "uninstall"
offline bash "$prefix/bundle/install.sh" --uninstall --prefix "$prefix"
[ ! -e "$prefix" ] || fail "the prefix is still there"

tar_mb=$(( $(stat -c %s "$bundle") / 1000000 ))
{
  echo "bundle: $(basename "$bundle") ${tar_mb} MB"
  grep '^bundle:' "$work/build.log"
  tar -tvf "$bundle" | awk '$1 !~ /^d/ && $6 ~ /\/.*\// {split($6, p, "/"); s[p[2]] += $3; n[p[2]]++}
    END {for (k in s) printf "  %-8s %4d files %6.0f MB\n", k, n[k], s[k] / 1e6}' | sort
  echo "build: ${build_s} s; install (unshare -n, incl. the model): ${install_s} s"
  grep -E '^installed in' "$work/install.log"
} | tee "$work/summary.txt"
echo "bundle-check passed ($work)"
