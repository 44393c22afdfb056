#!/usr/bin/env bash
# `skiff info` (text, --json, SKIFF_DISABLE_BACKENDS=onednn) and `skiff bench`
# (ops with a filter, model with a few iterations on a tiny ONNX file written
# here with protoc from onnx.proto) as a user runs them. No network.
# Usage: info_bench_cli_test.sh SKIFF_BINARY
set -u
SKIFF="$(realpath "$1")"
source "$(dirname "$0")/check.sh"
cd "$TMP"
export SKIFF_HOME="$TMP/home" SKIFF_OFFLINE=1
unset SKIFF_DISABLE_BACKENDS SKIFF_NUM_THREADS

# info
"$SKIFF" info >info.out 2>info.err; rc=$?
check "info: exit 0" test "$rc" -eq 0
for key in "skiff [0-9]" "  build: " "  cpu features: " "  kernel isa: " "  threads: " "  backends: *cpu: built" \
           " *onednn: oneDNN [0-9]" " *cuda: " "  ops: *[0-9][0-9]* registered"; do
  check "info: '$key'" grep -q "^$key" info.out
done
"$SKIFF" --threads 1 info --json >info.json 2>/dev/null; rc=$?
check "info --json: exit 0" test "$rc" -eq 0
check "info --json: keys and values" python3 -c "
import json; j = json.load(open('info.json'))
for k in ('version', 'build_type', 'compiler', 'cpu', 'cpu_features', 'kernel_isa', 'threads', 'cores', 'backends', 'ops'):
    assert k in j, k
assert j['threads'] == 1, j['threads']
assert j['backends']['cpu'] == 'built' and j['backends']['onednn'].startswith('oneDNN'), j['backends']
assert j['ops'] > 50 and j['cores'] >= 1, j"
check "info --json: the version --version prints" bash -c "\"$SKIFF\" --version | grep -qF \"\$(python3 -c \"import json; print(json.load(open('info.json'))['version'])\")\""
# With oneDNN disabled, info must not present it as in use (issue 29: it said
# 'oneDNN x.y.z (OpenMP runtime, JIT isa ...)' as if active).
SKIFF_DISABLE_BACKENDS=onednn "$SKIFF" info >off.out 2>off.err; rc=$?
check "info, oneDNN disabled: exit 0" test "$rc" -eq 0
check "info, oneDNN disabled: says disabled" grep -qi "onednn:.*disabled" off.out
SKIFF_DISABLE_BACKENDS=onednn "$SKIFF" info --json >off.json 2>/dev/null
check "info --json, oneDNN disabled: says disabled" python3 -c "
import json; b = json.load(open('off.json'))['backends']; assert 'disabled' in json.dumps(b['onednn']).lower(), b"

# bench ops: one small case, text and JSON
"$SKIFF" bench ops --filter sgemm_256 --threads-list 1 >ops.out 2>ops.err; rc=$?
check "bench ops: exit 0" test "$rc" -eq 0
check "bench ops: sgemm_256 with ms and GFLOP/s" grep -q "^sgemm_256 *threads=1 *[0-9.]* ms *[0-9.]* GFLOP/s" ops.out
check "bench ops: only the filtered case" test "$(wc -l <ops.out)" -eq 1
"$SKIFF" bench ops --filter conv_c_fwd --threads-list 1 --json >ops.json 2>/dev/null; rc=$?
check "bench ops --json: conv_c fwd and fwdbwd" python3 -c "
import json; rows = [json.loads(l) for l in open('ops.json')]
assert sorted(r['bench'] for r in rows) == ['conv_c_fwd', 'conv_c_fwdbwd'], rows
assert all(r['threads'] == 1 and r['seconds'] > 0 for r in rows), rows"
"$SKIFF" bench ops --filter no-such-bench >none.out 2>&1; rc=$?
check "bench ops with a filter matching nothing: no rows" bash -c "! grep -q 'ms' none.out"

# bench model: a 3->4 channel 3x3 convolution + ReLU with dynamic N, H, W
WEIGHTS=$(python3 -c "print(','.join(str(round(0.01 * i, 2)) for i in range(108)))")
cat >conv.txt <<EOF
ir_version: 8
opset_import { domain: "" version: 13 }
producer_name: "skiff-cli-test"
graph {
  name: "tiny_conv"
  node { op_type: "Conv" input: "x" input: "w" output: "c" name: "conv" attribute { name: "pads" ints: [1, 1, 1, 1] type: INTS } }
  node { op_type: "Relu" input: "c" output: "y" name: "relu" }
  initializer { name: "w" data_type: 1 dims: [4, 3, 3, 3] float_data: [$WEIGHTS] }
  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_param: "N" } dim { dim_value: 3 } dim { dim_param: "H" } dim { dim_param: "W" } } } } }
  output { name: "y" type { tensor_type { elem_type: 1 shape { dim { dim_param: "N" } dim { dim_value: 4 } dim { dim_param: "H" } dim { dim_param: "W" } } } } }
}
EOF
protoc --encode=onnx.ModelProto -I/usr/include /usr/include/onnx/onnx.proto <conv.txt >conv.onnx
check "test model written" test -s conv.onnx
"$SKIFF" bench model conv.onnx --input x:2x3x32x48 --threads 1 --warmup 1 --iters 3 >model.out 2>model.err; rc=$?
check "bench model: exit 0" test "$rc" -eq 0
for key in "model *.*conv.onnx" "inputs *x:2x3x32x48" "threads *1" "median *[0-9.]* ms" "p90 *[0-9.]* ms" "peak RSS *[0-9.]* MB"; do
  check "bench model: '$key'" grep -q "^$key" model.out
done
"$SKIFF" bench model conv.onnx --input x:1x3x16x16 --iters 2 --json >model.json 2>/dev/null; rc=$?
check "bench model --json: fields" python3 -c "
import json; j = json.loads(open('model.json').read().strip().splitlines()[-1])
assert j['inputs'] == ['x:1x3x16x16'] and 0 < j['median_ms'] <= j['p90_ms'] and j['peak_rss_mb'] > 0, j"
"$SKIFF" bench model conv.onnx --input x:1x3x16x20 --iters 3 --profile --top 1 >prof.out 2>prof.err; rc=$?
check "bench model --profile: exit 0" test "$rc" -eq 0
check "bench model --profile: medians over the --iters runs" grep -q "^median over 3 profiled runs" prof.err
check "bench model --profile: a row per op type" grep -Eq "^(Conv|skiff.FusedConv) +1 +[0-9.]+ +[0-9.]+%" prof.err
check "bench model --profile: the slowest node with its shapes" \
  grep -Eq "^ +[0-9.]+ ms  node 'conv' \(.*\) \[1, 3, 16, 20\], \[4, 3, 3, 3\](, -)? -> \[1, 4, 16, 20\]" prof.err
check "bench model --profile --top 1: one node listed" test "$(grep -c " ms  node " prof.err)" -eq 1

# graph show --nodes: every node with its inputs, outputs and attributes
"$SKIFF" graph show conv.onnx --nodes >nodes.out 2>nodes.err; rc=$?
check "graph show --nodes: exit 0" test "$rc" -eq 0
check "graph show --nodes: the conv node" grep -q "^Conv 'conv'  x, w -> c  pads=\[1,1,1,1\]" nodes.out
check "graph show --nodes: the relu node" grep -q "^Relu 'relu'  c -> y$" nodes.out
"$SKIFF" graph show conv.onnx --nodes --json >nodes.json 2>/dev/null
check "graph show --nodes --json: node_list" python3 -c "
import json; n = json.load(open('nodes.json'))['node_list']
assert [x['op_type'] for x in n] == ['Conv', 'Relu'], n
assert n[0]['inputs'] == ['x', 'w'] and n[0]['outputs'] == ['c'] and n[0]['attrs']['pads'] == [1, 1, 1, 1], n[0]"
"$SKIFF" graph show conv.onnx --optimized --nodes >opt.out 2>/dev/null
check "graph show --optimized --nodes: conv and relu fused" bash -c "grep -q '^skiff.FusedConv ' opt.out && ! grep -q '^Relu ' opt.out"

"$SKIFF" bench model conv.onnx --input y:1x3x16x16 --iters 1 >/dev/null 2>wrong.err; rc=$?
check "bench model with a wrong input name: exit 2" test "$rc" -eq 2
check "bench model with a wrong input name: names the input" grep -q "model input 'x' has no --input" wrong.err
"$SKIFF" bench model conv.onnx --input x:1x3x0x16 --iters 1 >/dev/null 2>dims.err; rc=$?
check "bench model with a zero dim: exit 2" test "$rc" -eq 2
check "bench model with a zero dim: says which" grep -q "'0' is not a positive dimension" dims.err
"$SKIFF" bench model missing.onnx --input x:1x3x16x16 --iters 1 >/dev/null 2>missing.err; rc=$?
check "bench model of a missing file: exit 2" test "$rc" -eq 2
check "bench model of a missing file: names it" grep -q "missing.onnx" missing.err
"$SKIFF" bench model conv.onnx --input x:1x3x16x16 --iters 0 >/dev/null 2>iters.err; rc=$?
check "bench model --iters 0: exit 2 (usage)" test "$rc" -eq 2

echo "$fails failure(s)"
test "$fails" -eq 0
