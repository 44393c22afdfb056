#!/usr/bin/env bash
# `skiff zoo list/search/info/pull/verify/rm/path` as a user runs them, with the
# exit codes of docs/zoo.md (0 success, 1 nothing found, 2 bad input, 5 I/O).
# No network: a temporary SKIFF_HOME and a local index (SKIFF_ZOO_INDEX) whose
# sources are file:// paths relative to the index, so SKIFF_OFFLINE=1 still works.
# Usage: zoo_cli_test.sh SKIFF_BINARY
set -u
SKIFF="$(realpath "$1")"
source "$(dirname "$0")/check.sh"

export SKIFF_HOME="$TMP/home" SKIFF_ZOO_INDEX="$TMP/zoo/index.yaml" SKIFF_OFFLINE=1 SKIFF_PROGRESS=0
unset SKIFF_ZOO_MIRRORS XDG_CACHE_HOME
mkdir -p "$TMP/zoo/files"
cd "$TMP"
printf 'conv weights of a tiny test model\n' >zoo/files/tiny_conv.onnx
printf 'a\nb\nc\n' >zoo/files/shared_dict.txt
printf 'vocabulary of the zebra tokenizer\n' >zoo/files/vocab.txt
sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { stat -c %s "$1"; }
entry() {  # entry PATH: one file entry of the index
  printf '      - path: %s\n        sha256: %s\n        size: %s\n        sources:\n          - file://files/%s\n' \
    "$1" "$(sha "zoo/files/$1")" "$(size "zoo/files/$1")" "$1"
}
model() {  # model NAME SUITE TASK DESCRIPTION
  printf '  - name: %s\n    suite: %s\n    task: %s\n    architecture: test model\n' "$1" "$2" "$3"
  printf '    description:\n      en: %s\n      zh: 测试模型\n    license: Apache-2.0\n    languages: [en]\n' "$4"
  printf '    metrics: []\n    version: "1"\n    files:\n'
}
{
  printf 'version: 1\nmodels:\n'
  model tiny-conv ocr text-detection "A tiny convolution for the CLI test."
  entry tiny_conv.onnx
  entry shared_dict.txt
  model tiny-tokenizer nlp tokenizer "The zebra tokenizer of the CLI test."
  entry vocab.txt
  entry shared_dict.txt
} >zoo/index.yaml

run() {  # run NAME ARGS...: stdout in NAME.out, stderr in NAME.err, exit code in $rc
  local name="$1"; shift
  "$SKIFF" zoo "$@" >"$name.out" 2>"$name.err"; rc=$?
}

# list
run list list
check "list: exit 0" test "$rc" -eq 0
check "list: header" grep -q "^NAME  *SUITE  *TASK  *SIZE  *CACHED  *LICENSE" list.out
check "list: both models, not cached" bash -c "grep -q '^tiny-conv .* no  *Apache-2.0' list.out && grep -q '^tiny-tokenizer .* no ' list.out"
run list_nlp list --suite nlp
check "list --suite nlp: only the tokenizer" bash -c "grep -q tiny-tokenizer list_nlp.out && ! grep -q tiny-conv list_nlp.out"
run list_task list --task text-detection --json
check "list --task --json: one model" python3 -c "
import json; j = json.load(open('list_task.out')); assert [m['name'] for m in j] == ['tiny-conv'], j
assert j[0]['cached'] is False and j[0]['size'] == $(($(size zoo/files/tiny_conv.onnx) + $(size zoo/files/shared_dict.txt))), j"

# search: 1 when nothing matches
run search search ZEBRA
check "search: exit 0, case-insensitive match in the description" test "$rc" -eq 0
check "search: only the tokenizer" bash -c "grep -q tiny-tokenizer search.out && ! grep -q tiny-conv search.out"
run search_json search tiny --json
check "search --json: both" python3 -c "import json; assert len(json.load(open('search_json.out'))) == 2"
run search_none search no-such-thing
check "search without a match: exit 1" test "$rc" -eq 1
check "search without a match: says so on stderr" grep -q "no model matches 'no-such-thing'" search_none.err
check "search without a match: stdout empty" test ! -s search_none.out

# info
run info info tiny-conv
check "info: exit 0" test "$rc" -eq 0
check "info: sha256 of every file" bash -c "grep -q 'sha256 $(sha zoo/files/tiny_conv.onnx)' info.out && grep -q 'sha256 $(sha zoo/files/shared_dict.txt)' info.out"
check "info: not cached" grep -q "cache: .*tiny-conv (not cached)" info.out
check "info: the file source" grep -q "source (file) file://files/tiny_conv.onnx" info.out
run info_json info tiny-tokenizer --json
check "info --json: files and cache_dir" python3 -c "
import json; j = json.load(open('info_json.out'))
assert [f['path'] for f in j['files']] == ['vocab.txt', 'shared_dict.txt'], j
assert j['files'][0]['sha256'] == '$(sha zoo/files/vocab.txt)' and j['cache_dir'].startswith('$SKIFF_HOME'), j"
run info_bad info tiny-cnov
check "info of an unknown model: exit 2" test "$rc" -eq 2
check "info of an unknown model: did you mean" grep -q "unknown zoo model 'tiny-cnov' (did you mean 'tiny-conv'?)" info_bad.err

# path before pull: 5
run path_before path tiny-conv
check "path of a model not pulled: exit 5" test "$rc" -eq 5
check "path of a model not pulled: says how to pull" grep -q "not cached; run \`skiff zoo pull tiny-conv\`" path_before.err

# pull (offline: file:// sources still work)
run pull_bad pull tiny-conv nonexistent-model
check "pull with an unknown name: exit 2" test "$rc" -eq 2
check "pull with an unknown name: nothing fetched first" test ! -e "$SKIFF_HOME/models/tiny-conv"
run pull pull tiny-conv tiny-tokenizer
check "pull: exit 0" test "$rc" -eq 0
DIR="$(awk -F'\t' '$1 == "tiny-conv" {print $2}' pull.out)"
check "pull: prints NAME<TAB>directory" test -d "$DIR"
check "pull: the files, byte for byte" bash -c "cmp -s '$DIR/tiny_conv.onnx' zoo/files/tiny_conv.onnx && cmp -s '$DIR/shared_dict.txt' zoo/files/shared_dict.txt"
check "pull: the shared file is stored once" test "$(find "$SKIFF_HOME/blobs" -type f ! -name '*.partial' | wc -l)" -eq 3
run path path tiny-conv
check "path after pull: exit 0, the pull's directory" bash -c "test $rc -eq 0 && test \"\$(cat path.out)\" = '$DIR'"
run list_after list
check "list after pull: cached yes" grep -q "^tiny-conv .* yes " list_after.out

# verify: 5 on a corrupt cached file, fixed by pull --force
run verify verify
check "verify: exit 0" test "$rc" -eq 0
check "verify: every file ok" test "$(grep -c '^ok ' verify.out)" -eq 4
BLOB="$(readlink -f "$DIR/tiny_conv.onnx")"
chmod u+w "$BLOB" && printf 'X' >>"$BLOB"
run verify_bad verify tiny-conv
check "verify of a corrupt file: exit 5" test "$rc" -eq 5
check "verify of a corrupt file: names it" grep -q "^CORRUPT  tiny-conv/tiny_conv.onnx" verify_bad.out
check "verify of a corrupt file: says how to fix it" grep -q "skiff zoo pull --force" verify_bad.err
run verify_all_bad verify
check "verify (all cached) with a corrupt file: exit 5" test "$rc" -eq 5
run verify_other verify tiny-tokenizer
check "verify of the intact model: exit 0" test "$rc" -eq 0
run verify_unknown verify nonexistent-model
check "verify of an unknown model: exit 2" test "$rc" -eq 2
run repull pull --force tiny-conv
check "pull --force: exit 0" test "$rc" -eq 0
run verify_fixed verify tiny-conv
check "verify after pull --force: exit 0" test "$rc" -eq 0

# rm: the shared file stays for the other model
run rm rm tiny-conv
check "rm: exit 0" test "$rc" -eq 0
check "rm: prints removed" grep -q "^removed	tiny-conv" rm.out
run path_gone path tiny-conv
check "path after rm: exit 5" test "$rc" -eq 5
run verify_kept verify tiny-tokenizer
check "rm keeps the file another model uses" bash -c "test $rc -eq 0 && grep -q '^ok .*tiny-tokenizer/shared_dict.txt' verify_kept.out"
run verify_missing verify tiny-conv
check "verify of a removed model by name: exit 5" test "$rc" -eq 5
check "verify of a removed model: missing" grep -q "^missing  tiny-conv/tiny_conv.onnx" verify_missing.out
run rm_unknown rm tiny-cnov
check "rm of an unknown model: exit 2" test "$rc" -eq 2

# A file whose source is gone (offline): 5; a broken index: 2
rm zoo/files/tiny_conv.onnx
run pull_gone pull tiny-conv
check "pull with no reachable source: exit 5" test "$rc" -eq 5
check "pull with no reachable source: names the file" grep -q "tiny_conv.onnx" pull_gone.err
sed -i 's/^\(        sha256: \)[0-9a-f]*$/\1abc/' zoo/index.yaml
run list_badindex list
check "invalid index: exit 2" test "$rc" -eq 2
check "invalid index: file:line and the key" grep -q "index.yaml:[0-9]*: .*sha256: expected 64 lowercase hex digits" list_badindex.err

echo "$fails failure(s)"
test "$fails" -eq 0
