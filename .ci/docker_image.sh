#!/usr/bin/env bash
# CI stage "the shipped image": build the component image from the Dockerfile, compile the templates with it
# and run them with kfp.local.DockerRunner (tests/image, marker docker_image) on the quickstarts, data in the
# Cloud Storage emulator as gs:// URIs.
#
#   bash .ci/docker_image.sh PYTHON     PYTHON: the CI venv's python (autorater-pipelines[test] installed)
#
# Engine: an engine that already answers is used and left running. Otherwise Debian's docker.io is
# installed if needed and dockerd is started without touching the host network (no bridge, no iptables:
# builds and containers use host networking), and stopped on exit with everything it started.
# Base image: BASE_IMAGE if set, else the Dockerfile's python:3.11-slim if it can be pulled, else a stand-in
# built from Debian's packages with debootstrap (python3 + venv, the host's CA bundle). The stand-in is kept
# as a docker image and as a tarball under $AUTORATER_CI_CACHE (default /var/cache/autorater-pipelines-ci)
# for later runs on the same machine; from scratch it takes ~4 minutes more.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${1:?usage: $0 PYTHON}"
IMAGE="${AUTORATER_CI_IMAGE:-autorater-pipelines:ci}"
CACHE="${AUTORATER_CI_CACHE:-/var/cache/autorater-pipelines-ci}"
STANDIN="autorater-ci-base:bookworm-python3.11"
WORK="$(mktemp -d)"
DOCKERD_PID=""
t0=$SECONDS

log() { echo "== [docker image $((SECONDS - t0))s] $*"; }

cleanup() {
  local rc=$?
  if [ -n "$DOCKERD_PID" ]; then
    log "stopping the containers and the dockerd (pid $DOCKERD_PID) this stage started"
    ids="$(docker ps -aq 2>/dev/null || true)"
    [ -z "$ids" ] || docker rm -f $ids >/dev/null 2>&1 || true
    kill "$DOCKERD_PID" 2>/dev/null || true
    for _ in $(seq 60); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 1; done
    kill -9 "$DOCKERD_PID" 2>/dev/null || true
    # dockerd's own containerd (started as its child) ends with it; say so if anything is left.
    if pgrep -f "containerd --config /var/run/docker/containerd" >/dev/null; then
      echo "warning: dockerd's containerd still runs: $(pgrep -af 'containerd --config /var/run/docker/containerd')" >&2
    fi
  fi
  rm -rf "$WORK"
  log "stage done (exit $rc)"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

apt_install() {
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@") \
    >"$WORK/apt.log" 2>&1 || { cat "$WORK/apt.log" >&2; echo "error: could not install $*" >&2; return 1; }
}

start_engine() {
  if docker info >/dev/null 2>&1; then
    log "using the Docker engine that already runs (left running)"
    return
  fi
  if ! command -v dockerd >/dev/null; then
    log "installing docker.io from Debian's packages"
    apt_install docker.io
  fi
  command -v docker >/dev/null || apt_install docker.io
  log "starting dockerd (no bridge, no iptables)"
  dockerd --bridge=none --iptables=false --ip6tables=false >"$WORK/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  for _ in $(seq 60); do
    docker info >/dev/null 2>&1 && return
    kill -0 "$DOCKERD_PID" 2>/dev/null || break
    sleep 1
  done
  cat "$WORK/dockerd.log" >&2
  echo "error: dockerd did not start" >&2
  return 1
}

standin_base() {
  if docker image inspect "$STANDIN" >/dev/null 2>&1; then
    log "stand-in base $STANDIN already built"
    return
  fi
  mkdir -p "$CACHE"
  local tarball="$CACHE/standin-bookworm-python3.11.tar"
  if [ ! -s "$tarball" ]; then
    command -v debootstrap >/dev/null || { log "installing debootstrap"; apt_install debootstrap; }
    log "building the stand-in base from Debian's packages (debootstrap, ~4 min)"
    local root="$WORK/rootfs"
    debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$root" \
      >"$WORK/debootstrap.log" 2>&1 || { tail -30 "$WORK/debootstrap.log" >&2; return 1; }
    # pip in the build reaches the package registry through this machine's TLS setup: its CA bundle.
    cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
    rm -f "$root"/usr/lib/python3*/EXTERNALLY-MANAGED
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc "$root"/usr/share/man
    tar -C "$root" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
    rm -rf "$root"
  else
    log "stand-in base from the cached $tarball"
  fi
  docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'ENV LANG=C.UTF-8' \
    -c 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
    -c 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
    "$tarball" "$STANDIN" >/dev/null
}

choose_base() {
  if [ -n "${BASE_IMAGE:-}" ]; then
    echo "$BASE_IMAGE"
    return
  fi
  local official
  official="$(sed -n 's/^ARG BASE_IMAGE=//p' Dockerfile)"
  if docker image inspect "$official" >/dev/null 2>&1 || timeout 60 docker pull -q "$official" >/dev/null 2>&1; then
    echo "$official"
    return
  fi
  log "$official cannot be pulled: using a stand-in base" >&2
  standin_base >&2
  echo "$STANDIN"
}

start_engine
BASE="$(choose_base)"
log "building $IMAGE on $BASE"
previous="$(docker image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)"
nice docker build --network host --build-arg "BASE_IMAGE=$BASE" --tag "$IMAGE" . >"$WORK/build.log" 2>&1 \
  || { tail -60 "$WORK/build.log" >&2; exit 1; }
# The image this run replaced (untagged now): removed, so repeated runs do not pile images up.
[ -z "$previous" ] || [ "$previous" = "$(docker image inspect -f '{{.Id}}' "$IMAGE")" ] \
  || docker rmi "$previous" >/dev/null 2>&1 || true
log "built: $(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}') ($(docker image inspect -f '{{.Size}}' "$BASE" | awk '{printf "%.0f MB", $1/1e6}') of them the base)"

log "compiling both templates with $IMAGE"
"$(dirname "$PYTHON")/autorater" compile --image "$IMAGE" --output-dir "$WORK/compiled"

log "running the templates in the image (pytest -m docker_image)"
AUTORATER_DOCKER_IMAGE="$IMAGE" AUTORATER_DOCKER_TEMPLATES="$WORK/compiled" AUTORATER_REQUIRE_DOCKER_IMAGE=1 \
  "$PYTHON" -m pytest -q -p no:cacheprovider -m docker_image tests/image
