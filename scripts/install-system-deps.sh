#!/usr/bin/env bash
# Install the Debian packages gil-lab needs, only those missing. Needs root (or sudo).
#   build deps of CPython   gcc make pkg-config xz-utils lib*-dev
#   notebook environment    python3 with venv and pip
#   widget JavaScript       npm (fetches @jupyter-widgets/html-manager once)
#   browser test            chromium
#   B2-style downloads      nginx-light (started by the harness with its own config), curl
#   tests                   iproute2 (`ss`: the echo server listens on loopback only), strace (the GIL
#                           trace's recorder makes no system call per event), patch (the trace's hooks)
set -euo pipefail

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for pkg in gcc make pkg-config xz-utils libssl-dev zlib1g-dev libbz2-dev liblzma-dev \
           libsqlite3-dev libffi-dev git curl ca-certificates nginx-light iproute2 strace patch; do
  have_pkg "$pkg" || need+=("$pkg")
done
command -v python3 >/dev/null || need+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv python3-pip)
command -v npm >/dev/null || need+=(npm)
if [ "${GILLAB_BROWSER:-1}" = 1 ]; then
  [ -x /usr/bin/chromium ] || need+=(chromium)
fi

if [ ${#need[@]} -eq 0 ]; then
  echo "[deps] system packages: all present"
  exit 0
fi
echo "[deps] installing: ${need[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "[deps] error: run as root or install: ${need[*]}" >&2; exit 2; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
