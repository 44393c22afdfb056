# Sourced by the setup.sh of each Node.js tool folder (ort/, tfjs/, tokenizers/).
# npm_ci_pinned TAG CHECK...: in the current folder, installs Debian's nodejs and
# npm if they are missing, then runs `npm ci` against the pinned package-lock.json
# (npm registry only) unless node_modules/.skiff-TAG-stamp records this lock file
# and Node version and CHECK succeeds. After installing, CHECK must succeed.
npm_ci_pinned() {
  local tag="$1"; shift
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    local sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >&2
  fi
  local stamp="node_modules/.skiff-$tag-stamp"
  local want; want="$(sha256sum package-lock.json | cut -d' ' -f1) node $(node --version)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$@" 2>/dev/null; then return 0; fi
  echo "$tag tools: npm ci in $(pwd)" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
  "$@" || { echo "$tag tools: the packages are not usable after npm ci" >&2; return 1; }
  echo "$want" > "$stamp"
}
