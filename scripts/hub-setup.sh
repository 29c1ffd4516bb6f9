#!/usr/bin/env bash
# The hub tier's host (tests/integration/hub, docs/hub.md): what an admin installs on a
# JupyterHub host, in a folder every OS user can read (BYRE_HUB_ROOT, default /opt/byre-hub),
# since the users' servers run as those users and cannot enter /root or a clone under it:
#   venv/   Debian's python3 with JupyterHub (pinned), jupyter_server, ipykernel, and this
#           checkout installed as a user's `pip install .` installs it (no --editable)
#   chp/    configurable-http-proxy from npm (pinned), the hub's proxy
#   bin/claude  the pinned claude CLI that ./dev setup installed (hard link, or a copy)
# Idempotent: the venv and the proxy are installed once per version stamp; byre_jupyter is
# installed again each time, so the tier tests this checkout. Needs root (writes /opt).
set -euo pipefail
HUB_VERSION=6.1.1
CHP_VERSION=5.3.0
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${BYRE_HUB_ROOT:-/opt/byre-hub}"
cli="${1:?usage: hub-setup.sh CLI_PATH}"
python=/usr/bin/python3   # a system interpreter: pyenv's under /root is not readable by users
[ -x "$python" ] || { echo "hub-setup.sh: $python is missing (apt-get install python3-venv)" >&2; exit 1; }
mkdir -p "$dest/bin"
chmod 755 "$dest" "$dest/bin"
stamp="jupyterhub==$HUB_VERSION configurable-http-proxy@$CHP_VERSION $("$python" --version)"
if [ "$(cat "$dest/.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$dest/venv" "$dest/chp"
  "$python" -m venv "$dest/venv"
  "$dest/venv/bin/pip" install --disable-pip-version-check --progress-bar off \
    "jupyterhub==$HUB_VERSION" jupyter_server ipykernel
  npm install --prefix "$dest/chp" --no-audit --no-fund --loglevel=error \
    "configurable-http-proxy@$CHP_VERSION"
  printf '%s\n' "$stamp" >"$dest/.stamp"
fi
# A user's install of this checkout (its dependencies resolved by pip, as a user's would be),
# again whenever the package's files (the bridge's build among them) or its metadata changed.
source_stamp="$(cd "$root" && find byre_jupyter pyproject.toml -name __pycache__ -prune -o \
  -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$dest/.source-stamp" 2>/dev/null)" != "$source_stamp" ]; then
  "$dest/venv/bin/pip" install --disable-pip-version-check --progress-bar off --force-reinstall \
    --no-deps "$root" >/dev/null
  "$dest/venv/bin/pip" install --disable-pip-version-check --progress-bar off "$root" >/dev/null
  printf '%s\n' "$source_stamp" >"$dest/.source-stamp"
fi
ln -f "$cli" "$dest/bin/claude" 2>/dev/null || cp -f "$cli" "$dest/bin/claude"
chmod 755 "$dest/bin/claude"
chmod -R a+rX "$dest"
echo "$dest"
