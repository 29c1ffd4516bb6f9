#!/usr/bin/env bash
# Install the pinned Claude Code CLI from npm into .byre/cli (project-local, gitignored) and
# print the path of its native binary. Idempotent: a present, matching install is reused.
set -euo pipefail
VERSION="${BYRE_CLI_VERSION:-2.1.328}"
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.byre/cli"
bin="$dest/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
case "$(uname -m)" in
  aarch64|arm64) bin="$dest/node_modules/@anthropic-ai/claude-code-linux-arm64/claude" ;;
esac
if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null | cut -d' ' -f1)" = "$VERSION" ]; then
  echo "$bin"; exit 0
fi
command -v npm >/dev/null || { echo "install-cli.sh: npm is not on PATH (needs node + npm)" >&2; exit 1; }
mkdir -p "$dest"
[ -f "$dest/package.json" ] || echo '{"name":"byre-cli","private":true}' > "$dest/package.json"
# The package's postinstall only links bin/claude.exe to the native binary that npm already
# installed as an optional dependency; we call that binary directly, so scripts can stay off.
# --include=optional: the native binary is an optional dependency; a user-level
# `omit=optional` npm config would otherwise silently leave it out.
npm install --prefix "$dest" --no-audit --no-fund --ignore-scripts --loglevel=error \
  --save-exact --include=optional "@anthropic-ai/claude-code@$VERSION" >&2
if [ ! -x "$bin" ]; then
  echo "install-cli.sh: npm installed @anthropic-ai/claude-code@$VERSION but $bin is missing" >&2
  echo "  (unsupported platform $(uname -s)/$(uname -m), or optional dependencies were skipped)" >&2
  exit 1
fi
got="$("$bin" --version | cut -d' ' -f1)"
[ "$got" = "$VERSION" ] || { echo "install-cli.sh: installed CLI reports $got, wanted $VERSION" >&2; exit 1; }
echo "claude CLI $got" >&2
echo "$bin"
