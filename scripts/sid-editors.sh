#!/usr/bin/env bash
# scripts/sid-editors.sh [--print-root]
#
# Makes, once per machine, a Debian sid chroot holding the editors people
# run today, for the end-to-end tests of editors/ (editors/sid_test.go):
# Neovim 0.12, Helix 25 and Emacs 30 with markdown-mode. Debian 12, the
# host, has only Neovim 0.7 and Emacs 28. The host's own libc and apt
# sources are never touched: debootstrap writes a separate tree, and apt
# runs inside it.
#
# The chroot lives at $DSH_SID_ROOT (default /opt/dsh-sid). It is built
# in DIR.build and renamed to DIR only when every package is in, with a
# stamp (etc/dsh-refls-editors) that lists the packages asked for and the
# versions installed; a later run that finds the same package list there
# reuses the tree and prints the versions (about a second). A run that
# finds another list, or no stamp, builds the tree again.
#
# The mirror is the one the host's apt already uses for Debian (read from
# /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list), so the
# chroot comes from the same registry as every other package of CI. sid's
# Release file may be older than its Valid-Until on a frozen mirror, so
# apt inside runs with Acquire::Check-Valid-Until=false.
#
# It also mounts /proc inside (Helix finds its runtime through
# /proc/self/exe), once per boot.
#
# Needs root (debootstrap, chroot, mount). Exits 0 with the chroot ready, 3 when
# it cannot be made here (not root, no debootstrap and no apt to install
# it, the mirror unreachable): the tests that need it then skip, naming
# this script. Measured on the 2-core CI machine: 30 s for debootstrap,
# 25 s for the editors, 850 MB.
set -euo pipefail

root=${DSH_SID_ROOT:-/opt/dsh-sid}
packages=(neovim hx emacs-nox elpa-markdown-mode)
stamp_rel=etc/dsh-refls-editors
want="packages: ${packages[*]}"

if [ "${1:-}" = "--print-root" ]; then
  echo "$root"
  exit 0
fi

fail() {
  echo "sid-editors: $*" >&2
  exit 3
}

# versions ROOT prints one "package version" line per package.
versions() {
  chroot "$1" dpkg-query -W -f '${Package} ${Version}\n' "${packages[@]}"
}

# mount_proc mounts /proc in the chroot (until the machine restarts):
# Helix finds its runtime files through /proc/self/exe.
mount_proc() {
  mountpoint -q "$1/proc" || mount -t proc proc "$1/proc" || fail "cannot mount /proc in $1"
}

if [ -f "$root/$stamp_rel" ] && [ "$(head -n 1 "$root/$stamp_rel")" = "$want" ]; then
  mount_proc "$root"
  echo "sid-editors: reusing $root"
  tail -n +2 "$root/$stamp_rel"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || fail "needs root for debootstrap and chroot (running as $(id -un))"
if ! command -v debootstrap >/dev/null 2>&1; then
  echo "sid-editors: installing debootstrap with apt"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; } ||
    fail "apt could not install debootstrap"
fi

# mirror is the first Debian archive (not the security one) the host's apt
# names, in deb822 or one-line form.
sources() {
  cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' || true
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' || true
}
mirror=$(sources | grep -E '/debian/?$' | grep -v security | head -n 1 || true)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

build=$root.build
# A mounted /proc is never removed with the tree.
for dir in "$build" "$root"; do
  ! mountpoint -q "$dir/proc" || umount "$dir/proc"
done
rm -rf "$build"
echo "sid-editors: debootstrap --variant=minbase sid $build $mirror"
start=$SECONDS
debootstrap --variant=minbase sid "$build" "$mirror" >"$build.log" 2>&1 ||
  { tail -n 20 "$build.log" >&2; rm -rf "$build"; fail "debootstrap failed (log above)"; }
echo "sid-editors: base system in $((SECONDS - start)) s; installing ${packages[*]}"
chroot "$build" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
  sh -c 'apt-get -o Acquire::Check-Valid-Until=false update -qq &&
    apt-get -o Acquire::Check-Valid-Until=false install -y -qq --no-install-recommends "$@"' \
  sh "${packages[@]}" >>"$build.log" 2>&1 ||
  { tail -n 20 "$build.log" >&2; rm -rf "$build"; fail "apt inside the chroot failed (log above)"; }
chroot "$build" apt-get clean
{ echo "$want"; versions "$build"; } >"$build/$stamp_rel"
rm -rf "$root" "$build.log"
mv "$build" "$root"
mount_proc "$root"
echo "sid-editors: made $root in $((SECONDS - start)) s ($(du -sh "$root" | cut -f1))"
tail -n +2 "$root/$stamp_rel"
