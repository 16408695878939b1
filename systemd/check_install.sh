#!/usr/bin/env bash
# Installs BUILD_DIR into a scratch DESTDIR with --prefix /usr and checks the layout: the binary,
# the unit (with the installed paths, passing check_unit.sh), the default configuration (and that
# a second install keeps an edited one), the docs.
# Usage: check_install.sh BUILD_DIR
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

DESTDIR="$dest" cmake --install "$build" --prefix /usr >/dev/null
unit="$dest/usr/lib/systemd/system/hubwatch.service"
[ -x "$dest/usr/bin/hubwatch" ] || fail "no /usr/bin/hubwatch (is add_subdirectory(systemd) in the top-level CMakeLists.txt?)"
[ -f "$unit" ] || fail "no /usr/lib/systemd/system/hubwatch.service"
grep -qx 'ExecStart=/usr/bin/hubwatch serve --config /etc/hubwatch/hubwatch.json' "$unit" ||
  fail "the installed unit's ExecStart: $(grep ^ExecStart= "$unit")"
grep -qx 'Documentation=file:///usr/share/doc/hubwatch/README.md' "$unit" ||
  fail "the installed unit's Documentation: $(grep ^Documentation= "$unit")"
config="$dest/etc/hubwatch/hubwatch.json"
[ -f "$config" ] || fail "no /etc/hubwatch/hubwatch.json"
if grep -qiE 'whsec_|hf_[A-Za-z0-9]{10}|token_file|secret' "$config"; then
  fail "the default configuration mentions a secret"
fi
for doc in README.md BENCHMARKS.md systemd.md hubwatch.example.json; do
  [ -f "$dest/usr/share/doc/hubwatch/$doc" ] || fail "no /usr/share/doc/hubwatch/$doc"
done
echo '{"repos": []}' > "$config"
DESTDIR="$dest" cmake --install "$build" --prefix /usr >/dev/null
[ "$(cat "$config")" = '{"repos": []}' ] || fail "a second install overwrote the edited configuration"
bash "$here/check_unit.sh" "$unit" 2.0 >/dev/null || fail "the installed unit does not pass check_unit.sh"
echo "install layout OK"
