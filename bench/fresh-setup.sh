#!/usr/bin/env bash
# Times a newcomer's `bash scripts/setup.sh` on a fresh Debian: a debootstrap chroot (Debian's
# default install plus git, which cloned the project) with nothing else installed, a fresh clone
# of this commit, an empty cargo registry and npm cache, and this machine's Rust toolchain mounted
# read-only (setup.sh asks for rustup's; nothing here downloads a toolchain). Each phase's start is
# printed with the seconds since the start; the app's window cannot open in the chroot (no
# display), so the run ends where setup.sh starts it.
#
#   sudo bash bench/fresh-setup.sh [SUITE]   (SUITE: bookworm, the default, or another Debian suite)
#
# Needs root (debootstrap, chroot, mounts). The base system is kept in $FRESH_CACHE (default
# /var/tmp/airlock-fresh) and copied for each run, so a second run does not wait for debootstrap;
# each run's copy is removed after it (setup.sh's background logs are kept beside the base).
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:-bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${FRESH_CACHE:-/var/tmp/airlock-fresh}
[ "$(id -u)" = 0 ] || { echo "needs root (debootstrap, chroot): run it with sudo" >&2; exit 1; }
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
cargo_bin=$(dirname "$(command -v cargo)")
[ -d "$rustup_home/toolchains" ] || { echo "no rustup toolchain in $rustup_home" >&2; exit 1; }

if ! command -v debootstrap >/dev/null; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap
fi
base="$cache/base-$suite"
if [ ! -f "$base/.complete" ]; then
  rm -rf "$base"
  mkdir -p "$cache"
  debootstrap --include=git,ca-certificates "$suite" "$base" "$mirror"
  touch "$base/.complete"
fi

run="$cache/run-$$"
mounts=()
cleanup() {
  # The background steps' logs (the crates' download, the early build) outlive the run.
  cp "$run"/root/airlock/target/setup-*.log "$cache/" 2>/dev/null || true
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
  rm -rf "$run"
}
trap cleanup EXIT
cp -a "$base" "$run"
bind() { mkdir -p "$run$2"; mount --bind "$1" "$run$2"; mounts+=("$run$2"); [ "${3:-}" = ro ] && mount -o remount,bind,ro "$run$2"; return 0; }
mount -t proc proc "$run/proc"; mounts+=("$run/proc")
bind /sys /sys
bind /dev /dev
bind /dev/pts /dev/pts
bind "$rustup_home" /opt/rustup ro
bind "$cargo_bin" /opt/cargo-bin ro
cp /etc/resolv.conf "$run/etc/resolv.conf"
# Services the packages would start on a real machine have no init here.
printf '#!/bin/sh\nexit 101\n' > "$run/usr/sbin/policy-rc.d"; chmod +x "$run/usr/sbin/policy-rc.d"
# A network that inspects TLS (as this one does) needs its certificate authority on every machine:
# the host's own additions are trusted in the chroot too, and Node is told of them as on the host.
# A property of the network, not of the machine.
network_env=()
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$run/usr/local/share/ca-certificates/"
  chroot "$run" update-ca-certificates >/dev/null
  network_env+=(NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
fi
git clone -q "$PWD" "$run/root/airlock"
git -C "$run/root/airlock" checkout -q "$(git rev-parse HEAD)"

echo "fresh $suite chroot at $run; commit $(git rev-parse --short HEAD); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
set +e
chroot "$run" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 RUSTUP_HOME=/opt/rustup \
  CARGO_HOME=/root/.cargo "${network_env[@]}" PATH=/opt/cargo-bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c 'cd /root/airlock && bash scripts/setup.sh' 2>&1 |
  while IFS= read -r line; do printf '[%4ds] %s\n' $(($(date +%s) - start)) "$line"; done
status=${PIPESTATUS[0]}
set -e
end=$(date +%s)
echo "setup.sh ended with $status after $((end - start)) s (the app cannot open a window here: a non-zero end after \"Installed the command-line tools\" is expected)"
