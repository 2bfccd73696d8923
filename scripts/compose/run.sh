#!/usr/bin/env bash
# `npm run test:compose`: docker-compose.yml run for real (scripts/compose/test/stack.compose-spec.ts).
#   1. installs what is missing from Debian's packages: docker.io (the engine), debootstrap, and
#      Compose v2 (Debian 13's docker-compose package: a static binary, put where the docker CLI
#      finds its plugins; fetched with apt-get from a private package list, the system's apt
#      sources untouched);
#   2. starts dockerd if no engine answers, and stops it at the end (only one it started);
#   3. builds the stand-ins for the official images (scripts/compose/stand-ins/build.sh, cached);
#   4. runs the suite, which brings the stack up and tears it down (containers, networks, volumes).
# Exits 77 when this machine cannot run a Docker engine or get Compose (.ci/run skips on that),
# otherwise with the suite's status. Extra arguments go to jest.
set -euo pipefail
cd "$(dirname "$0")/../.."

CACHE_DIR="${STAND_IN_CACHE_DIR:-/var/cache/cms-compose-stand-ins}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
export COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-cms-compose-test}"
export DEBIAN_FRONTEND=noninteractive
SKIP=77

log() { printf '%s test:compose: %s\n' "$(date +%T)" "$*" >&2; }
skip() { log "SKIPPED: $*"; exit "$SKIP"; }

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || skip "needs root (or sudo) to install and start a Docker engine"
  SUDO=(sudo)
fi

# Another install on this machine (a test suite of its own) may hold dpkg's lock: wait for it.
APT_WAIT=(-o DPkg::Lock::Timeout=600)

install_packages() {
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  [ "${#missing[@]}" -eq 0 ] && return
  log "installing ${missing[*]}"
  "${SUDO[@]}" apt-get "${APT_WAIT[@]}" update -qq >&2 || true
  "${SUDO[@]}" apt-get "${APT_WAIT[@]}" install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
    skip "could not install ${missing[*]} with apt-get"
}

# Compose v2 as a CLI plugin, from Debian 13's package (Debian 12 only has Compose 1.29).
install_compose_v2() {
  docker compose version >/dev/null 2>&1 && return
  command -v docker >/dev/null || skip "no docker CLI"
  log "installing Compose v2 from Debian 13 (trixie)'s docker-compose package"
  local apt_dir="$CACHE_DIR/apt-trixie" work
  work="$(mktemp -d)"
  "${SUDO[@]}" mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
  echo "deb $DEBIAN_MIRROR trixie main" | "${SUDO[@]}" tee "$apt_dir/sources.list" >/dev/null
  local apt_options=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/nonexistent
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
    -o APT::Sandbox::User=root)
  if "${SUDO[@]}" apt-get "${apt_options[@]}" update -qq >&2 &&
    (cd "$work" && "${SUDO[@]}" apt-get "${apt_options[@]}" download docker-compose >&2); then
    "${SUDO[@]}" mkdir -p /usr/local/lib/docker/cli-plugins
    dpkg-deb --fsys-tarfile "$work"/docker-compose_*.deb |
      tar -xO ./usr/libexec/docker/cli-plugins/docker-compose |
      "${SUDO[@]}" tee /usr/local/lib/docker/cli-plugins/docker-compose >/dev/null
    "${SUDO[@]}" chmod 755 /usr/local/lib/docker/cli-plugins/docker-compose
  fi
  rm -rf "$work"
  docker compose version >/dev/null 2>&1 || skip "could not install Compose v2 (docker compose)"
}

STARTED_DOCKERD=""
start_engine() {
  if docker info >/dev/null 2>&1; then
    log "using the Docker engine that is already running"
    return
  fi
  local logfile=/var/log/cms-compose-dockerd.log
  log "starting dockerd (log: $logfile)"
  "${SUDO[@]}" bash -c "dockerd >'$logfile' 2>&1 & echo \$! >/run/cms-compose-dockerd.pid"
  STARTED_DOCKERD="$(cat /run/cms-compose-dockerd.pid)"
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && return
    kill -0 "$STARTED_DOCKERD" 2>/dev/null || break
    sleep 1
  done
  tail -5 "$logfile" >&2 || true
  stop_engine
  skip "dockerd did not start (see $logfile)"
}

stop_engine() {
  [ -n "$STARTED_DOCKERD" ] || return 0
  log "stopping the dockerd this run started (pid $STARTED_DOCKERD)"
  "${SUDO[@]}" kill -TERM "$STARTED_DOCKERD" 2>/dev/null || true
  for _ in $(seq 1 30); do
    kill -0 "$STARTED_DOCKERD" 2>/dev/null || break
    sleep 1
  done
  "${SUDO[@]}" kill -KILL "$STARTED_DOCKERD" 2>/dev/null || true
  "${SUDO[@]}" rm -f /run/cms-compose-dockerd.pid
  STARTED_DOCKERD=""
}

# Whatever happens to the suite: nothing of the project left running, the images this run left
# untagged (the project image a rebuild replaced) and old build cache removed, the engine stopped
# if this run started it.
DANGLING_BEFORE=""
cleanup() {
  local status=$?
  if docker info >/dev/null 2>&1; then
    docker rm -f "$COMPOSE_PROJECT_NAME-receiver" >/dev/null 2>&1 || true
    docker compose -p "$COMPOSE_PROJECT_NAME" --profile monitoring down --volumes --remove-orphans --timeout 30 >/dev/null 2>&1 || true
    comm -13 <(echo "$DANGLING_BEFORE") <(docker images -q --filter dangling=true | sort -u) |
      xargs -r docker image rm >/dev/null 2>&1 || true
    docker builder prune -f --keep-storage 3gb >/dev/null 2>&1 || true
  fi
  stop_engine
  log "done in $((SECONDS))s (exit $status)"
  exit "$status"
}

install_packages
install_compose_v2
trap cleanup EXIT
trap 'exit 130' INT TERM
start_engine
DANGLING_BEFORE="$(docker images -q --filter dangling=true | sort -u)"
log "$(docker version --format 'engine {{.Server.Version}}, CLI {{.Client.Version}}'), $(docker compose version)"

started=$SECONDS
"${SUDO[@]}" bash scripts/compose/stand-ins/build.sh
log "stand-in images ready in $((SECONDS - started))s"

npx jest --config scripts/compose/jest.config.js --runInBand "$@"
