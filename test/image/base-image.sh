#!/usr/bin/env bash
# Makes (or reuses) the local base images the smoke test builds the Dockerfile on, without
# any container registry: a Debian trixie root made by debootstrap (trixie's nodejs is
# 20.19, the oldest Node package.json allows; bookworm's is too old) and imported into
# podman, plus a build base with npm installed on top of it.
#
#   test/image/base-image.sh        prints "RUNTIME_IMAGE BUILD_IMAGE"
#
# Both are tagged with a hash of the recipe below, so a fresh clone on the same machine
# reuses them, and a changed recipe makes new ones. The debootstrap tarball is kept in
# $CERT_CSI_CI_CACHE (default /var/cache/cert-csi-ci as root, else ~/.cache/cert-csi-ci):
# if podman's storage was wiped, importing it takes seconds instead of a new debootstrap.
set -euo pipefail

SUITE=trixie
# mount: bind mode runs mount/umount (util-linux is Essential, so it is there anyway).
PACKAGES=nodejs,ca-certificates,mount
BUILD_PACKAGES=npm

# The mirror this machine's apt uses (no other host is known to be reachable).
mirror() {
  local uri
  uri=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -n1 || true)
  if [ -z "$uri" ]; then
    uri=$(grep -hsE '^deb ' /etc/apt/sources.list | awk '{print $2}' | head -n1 || true)
  fi
  echo "${uri:-http://deb.debian.org/debian}"
}

MIRROR=$(mirror)
BASE_RECIPE="debootstrap --variant=minbase --include=$PACKAGES $SUITE $MIRROR"
BUILD_RECIPE="ARG BASE
FROM \$BASE
RUN apt-get update \\
  && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $BUILD_PACKAGES \\
  && rm -rf /var/lib/apt/lists/*"
hash() { printf '%s' "$1" | sha256sum | cut -c1-16; }
BASE_HASH=$(hash "$BASE_RECIPE")
BUILD_HASH=$(hash "$BASE_RECIPE $BUILD_RECIPE")
RUNTIME_IMAGE="localhost/cert-csi-ci/base:$BASE_HASH"
BUILD_IMAGE="localhost/cert-csi-ci/build-base:$BUILD_HASH"

if [ "$(id -u)" = 0 ]; then default_cache=/var/cache/cert-csi-ci; else default_cache="$HOME/.cache/cert-csi-ci"; fi
CACHE="${CERT_CSI_CI_CACHE:-$default_cache}"
mkdir -p "$CACHE"
TARBALL="$CACHE/base-$BASE_HASH.tar"

log() { echo "base-image: $*" >&2; }

if ! podman image exists "$RUNTIME_IMAGE"; then
  if [ ! -s "$TARBALL" ]; then
    log "no cached base for recipe $BASE_HASH: debootstrap $SUITE from $MIRROR (a few minutes, once)"
    root=$(mktemp -d "$CACHE/root.XXXXXX")
    trap 'rm -rf "$root"' EXIT
    debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$root" "$MIRROR" >&2
    # No package lists or caches in the image; apt-get update fetches them when needed.
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    # Written aside and renamed: a concurrent run never imports half a tarball.
    tar -C "$root" -cf "$TARBALL.partial.$$" .
    mv "$TARBALL.partial.$$" "$TARBALL"
    rm -rf "$root"
    trap - EXIT
  fi
  log "importing $TARBALL as $RUNTIME_IMAGE"
  podman import --quiet "$TARBALL" "$RUNTIME_IMAGE" >/dev/null
fi

if ! podman image exists "$BUILD_IMAGE"; then
  log "making $BUILD_IMAGE ($BUILD_PACKAGES on top of the base)"
  context=$(mktemp -d)
  printf '%s\n' "$BUILD_RECIPE" | podman build --quiet --tag "$BUILD_IMAGE" \
    --build-arg "BASE=$RUNTIME_IMAGE" --file - "$context" >/dev/null
  rmdir "$context"
fi

echo "$RUNTIME_IMAGE $BUILD_IMAGE"
