#!/usr/bin/env bash
# Builds offline stand-ins for the official images that docker-compose.yml and Dockerfile name
# (node, postgres, redis, rabbitmq, nginx), for machines that reach Debian's package mirror but no
# container registry. Each is tagged exactly as those files name it, so both run unchanged:
#   1. a Debian 12 root filesystem from debootstrap, imported with `docker import`
#      (cms-stand-ins/debian:bookworm; the debootstrap tarball is kept in the cache directory);
#   2. one image per official image, FROM that base (stand-ins/<name>/Dockerfile): Debian's
#      packages plus a small entrypoint honouring the environment variables the compose file uses.
#      node:20-slim gets this machine's own Node.js 20 and npm, since Debian 12's nodejs is 18.
# Every image is labelled with a hash of what it was built from and rebuilt only when that changes.
# A tag that already exists without the label is a real image (a machine with a registry): kept.
#
# usage: scripts/compose/stand-ins/build.sh        (root, a running Docker engine, debootstrap)
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
CACHE_DIR="${STAND_IN_CACHE_DIR:-/var/cache/cms-compose-stand-ins}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm
BASE_IMAGE=cms-stand-ins/debian:$SUITE
LABEL=org.cms.stand-in

log() { printf '%s stand-ins: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

sha() { sha256sum | cut -c1-16; }
# A download from the mirror can fail now and then ("Couldn't download packages"): try again.
retry() {
  local attempts=$1 n=1
  shift
  until "$@"; do
    [ "$n" -lt "$attempts" ] || return 1
    log "attempt $n of $attempts failed: $1; retrying"
    n=$((n + 1))
    sleep 5
  done
}
label_of() { docker image inspect -f "{{index .Config.Labels \"$LABEL\"}}" "$1" 2>/dev/null || echo missing; }

# The official images the project's files name: `image:` in the compose file (not the project's
# own image, which is built) and every FROM in the Dockerfile that is not one of its stages.
official_images() {
  {
    sed -nE 's/^\s+image:\s*([^ #]+).*/\1/p' "$ROOT/docker-compose.yml" | grep -v '^conversation-messaging-service:'
    awk 'toupper($1) == "FROM" { stages[tolower($4)] = 1; if (!(tolower($2) in stages)) print $2 }' "$ROOT/Dockerfile"
  } | sort -u
}

# Debootstrap once per build-script version; the tarball is what a rebuild starts from.
build_base() {
  local hash tarball rootfs
  hash="$(cat "$HERE/build.sh" | sha)"
  if [ "$(label_of "$BASE_IMAGE")" = "$hash" ]; then return; fi
  tarball="$CACHE_DIR/debian-$SUITE-$hash.tar.gz"
  if [ ! -s "$tarball" ]; then
    log "debootstrap $SUITE (minbase) from $MIRROR"
    rootfs="$(mktemp -d)"
    retry 3 debootstrap_into "$rootfs" >"$rootfs.log" 2>&1 ||
      { tail -20 "$rootfs.log" >&2; rm -rf "$rootfs" "$rootfs.log"; die "debootstrap failed"; }
    slim_rootfs "$rootfs"
    mkdir -p "$CACHE_DIR"
    rm -f "$CACHE_DIR"/debian-"$SUITE"-*.tar.gz
    tar -C "$rootfs" --numeric-owner -czf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
    rm -rf "$rootfs" "$rootfs.log"
  fi
  log "importing $tarball as $BASE_IMAGE"
  docker import \
    --change "LABEL $LABEL=$hash" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' \
    "$tarball" "$BASE_IMAGE" >/dev/null
}

debootstrap_into() {
  rm -rf "$1" && mkdir -p "$1" && debootstrap --variant=minbase "$SUITE" "$1" "$MIRROR"
}

# What Debian's own slim images do: no documentation, manuals or translations, no apt caches,
# no services started by package installs.
slim_rootfs() {
  local rootfs=$1
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
EOF
  printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d" && chmod +x "$rootfs/usr/sbin/policy-rc.d"
  echo "deb $MIRROR $SUITE main" >"$rootfs/etc/apt/sources.list"
  find "$rootfs/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/{man,info}/* "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* \
    "$rootfs"/var/log/*.log "$rootfs"/var/log/apt/* "$rootfs"/debootstrap
  find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
}

# The build context of one stand-in: its directory, plus this machine's Node.js for node.
prepare_context() {
  local name=$1 context=$2
  cp -a "$HERE/$name/." "$context/"
  if [ "$name" = node ]; then
    local node npm_dir
    node="$(command -v node)" || die "node is needed for the node stand-in"
    npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
    mkdir -p "$context/usr-local/bin" "$context/usr-local/lib/node_modules" "$context/ca"
    cp "$(readlink -f "$node")" "$context/usr-local/bin/node"
    cp -a "$npm_dir" "$context/usr-local/lib/node_modules/npm"
    if [ -s "${NODE_EXTRA_CA_CERTS:-}" ]; then cp "$NODE_EXTRA_CA_CERTS" "$context/ca/host-ca-certificates.crt"; fi
  fi
}

build_stand_in() {
  local tag=$1 name=${1%%:*} context hash args=()
  [ -f "$HERE/$name/Dockerfile" ] || die "no stand-in for $tag (expected $HERE/$name/Dockerfile)"
  if [ "$name" = node ]; then
    local major
    major="$(node -p 'process.versions.node.split(".")[0]')"
    [ "${tag#node:"$major"}" != "$tag" ] || die "$tag needs Node.js ${tag#node:} here; this machine has $(node --version)"
  fi
  context="$(mktemp -d)"
  prepare_context "$name" "$context"
  hash="$( (label_of "$BASE_IMAGE"; cd "$context" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha)"
  local current
  current="$(label_of "$tag")"
  if [ "$current" = "$hash" ]; then
    log "$tag is up to date"
  elif [ "$current" = "" ]; then
    log "$tag exists and is not a stand-in (a real image): keeping it"
  else
    if [ -s "$context/ca/host-ca-certificates.crt" ]; then
      args+=(--build-arg NODE_EXTRA_CA_CERTS=/usr/local/share/stand-in-ca/host-ca-certificates.crt)
    fi
    log "building $tag"
    local started=$SECONDS
    retry 3 env DOCKER_BUILDKIT=0 docker build --quiet --network host --label "$LABEL=$hash" "${args[@]}" -t "$tag" "$context" >/dev/null 2>"$context.log" ||
      { tail -30 "$context.log" >&2; rm -rf "$context" "$context.log"; die "building $tag failed"; }
    log "built $tag in $((SECONDS - started))s"
  fi
  rm -rf "$context" "$context.log"
}

command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install -y debootstrap)"
docker info >/dev/null 2>&1 || die "no Docker engine answers"
started=$SECONDS
build_base
for tag in $(official_images); do build_stand_in "$tag"; done
# Images a rebuild replaced, no longer tagged.
docker image prune -f --filter "label=$LABEL" >/dev/null
log "stand-ins ready in $((SECONDS - started))s: $(official_images | tr '\n' ' ')"
