#!/usr/bin/env bash
# Checks the Windows build as far as Linux can: the whole workspace linted for Windows
# (x86_64-pc-windows-gnu, linked with mingw-w64), and its tests run as Windows programs under
# Wine. Wine is not Windows (its cmd.exe, file system and ACLs are reimplementations): a pass
# here means "probably right", CI's Windows job is the real check (docs/PLATFORMS.md).
# Not part of scripts/test.sh: it needs rustup's Windows target, mingw-w64 and Wine
# (apt-get install gcc-mingw-w64-x86-64 wine64 wine) and takes a while.
set -euo pipefail
cd "$(dirname "$0")/.."
target=x86_64-pc-windows-gnu
wine=/usr/lib/wine/wine64
for needed in x86_64-w64-mingw32-gcc "$wine"; do
  if ! command -v "$needed" >/dev/null; then
    echo "missing $needed: apt-get install gcc-mingw-w64-x86-64 wine64 wine" >&2
    exit 1
  fi
done
rustup target add "$target"
export WINEDEBUG=-all
export WINEPREFIX="${WINEPREFIX:-$HOME/.wine}"

# Rust's standard library asks bcryptprimitives.dll (Windows 10 and later) for random bytes and
# Wine 8 has none: a stand-in exporting ProcessPrng on top of RtlGenRandom.
system32="$WINEPREFIX/drive_c/windows/system32"
if [ ! -f "$system32/bcryptprimitives.dll" ]; then
  "$wine" cmd /c exit 0 >/dev/null 2>&1 || true # creates the prefix
  stub=$(mktemp -d)
  cat >"$stub/bcryptprimitives.c" <<'EOF'
#include <windows.h>
#include <ntsecapi.h>
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!RtlGenRandom(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
EOF
  x86_64-w64-mingw32-gcc -shared -O2 -o "$system32/bcryptprimitives.dll" "$stub/bcryptprimitives.c" -ladvapi32
  rm -rf "$stub"
fi

# The desktop app embeds ui/dist at compile time.
(cd ui && npm run build)
cargo clippy --target "$target" --workspace --all-targets --locked -- -D warnings

export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$wine"
cargo test --target "$target" --locked -p airlock-core -p airlock-protocol -p airlock-store-port -p airlock-store-sqlite \
  -p airlock-llm -p airlock-engine -p airlock-api -p airlock-mcp -p airlock-agents \
  -p airlock-hook -p airlock-testkit --features airlock-agents/connect
# The CLI end to end; architecture.rs runs `cargo metadata` with this machine's (Linux) cargo.
cargo test --target "$target" --locked -p airlock-cli \
  --test e2e --test hostile --test crash --test providers_e2e
# The desktop's unit tests load WebView2Loader.dll from beside the test binary.
target_dir="${CARGO_TARGET_DIR:-target}/$target/debug"
cargo test --target "$target" --locked -p airlock-desktop --bin airlock-desktop --no-run
cp "$target_dir/WebView2Loader.dll" "$target_dir/deps/"
cargo test --target "$target" --locked -p airlock-desktop --bin airlock-desktop
echo "Windows: linted, and the tests above pass under Wine"
