#!/usr/bin/env bash
# The Qt packages the app loads at run time agree between tools/install-deps.sh (what a build
# machine gets) and the Debian package's Depends (what a user gets):
#   check_qt_packages.sh INSTALL_DEPS_SH "RUNTIME_PACKAGES (;-separated)" "TEST_ONLY (;-separated)"
# Every runtime package is installed by install-deps.sh, and every QML module install-deps.sh
# names (qml6-module-*) is a runtime package or one of the test-only ones.
set -euo pipefail

script=$1
IFS=';' read -r -a runtime <<<"$2"
IFS=';' read -r -a test_only <<<"${3:-}"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
((${#runtime[@]} > 0)) || fail "no runtime packages given"
# The words of the PACKAGES=( ... ) array, comments dropped.
mapfile -t installed < <(sed -n '/^PACKAGES=(/,/^)/p' "$script" | sed 's/#.*//; s/PACKAGES=(//; s/)//' |
  tr -s ' \t' '\n' | sed '/^$/d' | sort -u)
((${#installed[@]} > 0)) || fail "found no PACKAGES=( ... ) list in $script"
in_list() {
  local needle=$1
  shift
  local x
  for x in "$@"; do [[ $x == "$needle" ]] && return 0; done
  return 1
}
for p in "${runtime[@]}"; do
  in_list "$p" "${installed[@]}" || fail "the package depends on $p, which $script does not install"
done
for p in "${installed[@]}"; do
  [[ $p == qml6-module-* ]] || continue
  in_list "$p" "${runtime[@]}" || in_list "$p" "${test_only[@]}" ||
    fail "$script installs the QML module package $p, which the package's Depends lack"
done
echo "ok: ${#runtime[@]} run-time Qt packages, installed by install-deps.sh and in Depends: ${runtime[*]}"
