# Sourced by setup.sh and test.sh: a Node.js recent enough for the UI's build and the tests' npm
# tools (Vite needs 20.19 or newer). Debian 12 and Ubuntu 24.04 ship Node 18, so on a fresh
# machine the system's node is too old: then Node 22 and npm 10 from the npm registry (pinned; the
# Node tests/mcp-servers pins too) are installed outside the clone and put first on PATH.
AIRLOCK_NODE_VERSION=22.23.3
AIRLOCK_NPM_VERSION=10.9.9
airlock_node_dir="${AIRLOCK_TOOLS_DIR:-$HOME/.cache/airlock-tools}/node-$AIRLOCK_NODE_VERSION"

# Whether `node` on PATH is 20.19 or newer.
node_is_recent() {
  local version major minor
  version=$(node --version 2>/dev/null) || return 1
  version=${version#v}
  major=${version%%.*}
  minor=${version#*.}
  minor=${minor%%.*}
  [ "$major" -gt 20 ] || { [ "$major" -eq 20 ] && [ "$minor" -ge 19 ]; }
}

# Puts a recent Node.js first on PATH, installing the pinned one from npm when the system's is
# older (the system's npm, whatever its age, can fetch it).
use_recent_node() {
  node_is_recent && return 0
  if [ ! -x "$airlock_node_dir/node_modules/.bin/node" ]; then
    if ! command -v npm >/dev/null; then
      echo "Node.js 20.19 or newer (with npm) is needed: install npm and run this again." >&2
      return 1
    fi
    echo "The system's Node.js is $(node --version 2>/dev/null || echo missing); installing Node.js $AIRLOCK_NODE_VERSION from npm into $airlock_node_dir"
    mkdir -p "$airlock_node_dir"
    npm install --prefix "$airlock_node_dir" --no-audit --no-fund \
      "node@$AIRLOCK_NODE_VERSION" "npm@$AIRLOCK_NPM_VERSION"
  fi
  export PATH="$airlock_node_dir/node_modules/.bin:$PATH"
  if ! node_is_recent; then
    echo "Node.js $AIRLOCK_NODE_VERSION from npm did not install into $airlock_node_dir: remove it and run this again." >&2
    return 1
  fi
}
