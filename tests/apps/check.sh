# Shared by the CLI tests (source it): a scratch directory removed on exit, and
# `check DESCRIPTION COMMAND...`, which prints ok/FAIL and counts failures in $fails.
TMP="$(mktemp -d)"
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$TMP"' EXIT
fails=0
check() {
  local what="$1"; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fails=$((fails + 1)); fi
}
