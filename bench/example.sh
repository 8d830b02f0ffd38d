#!/usr/bin/env bash
# tf.Example build+serialize and parse for an ImageNet-style example
# (bench/example.c), next to python3-protobuf doing the same build in the
# same run. Usage: bench/example.sh [seconds per case]
set -eu
cd "$(dirname "$0")/.."
BUILD=${TFREC_BUILD:-build}
secs=${1:-1}
out=$("$BUILD/bench/example" "$secs")
echo "$out" | grep -v '^builder_per_sec'
c_rate=$(echo "$out" | awk '/^builder_per_sec/ {print $2}')
gen=$(mktemp -d "${TMPDIR:-/tmp}/tfrec-bench-example.XXXXXX")
trap 'rm -rf "$gen"' EXIT
protoc -Iproto --python_out="$gen" proto/tensorflow/core/example/example.proto \
    proto/tensorflow/core/example/feature.proto
py_rate=$(PYTHONPATH="$gen" /usr/bin/python3 - "$secs" <<'PY'
import sys, time
from tensorflow.core.example import example_pb2
image = bytes((i * 2654435761 >> 13) & 0xFF for i in range(110 * 1024))
def build():
    ex = example_pb2.Example()
    f = ex.features.feature
    f["image/height"].int64_list.value.append(375)
    f["image/width"].int64_list.value.append(500)
    f["image/channels"].int64_list.value.append(3)
    f["image/class/label"].int64_list.value.append(417)
    f["image/colorspace"].bytes_list.value.append(b"RGB")
    f["image/class/synset"].bytes_list.value.append(b"n04235860")
    f["image/format"].bytes_list.value.append(b"JPEG")
    f["image/filename"].bytes_list.value.append(b"n04235860_14959.JPEG")
    f["image/encoded"].bytes_list.value.append(image)
    return ex.SerializeToString(deterministic=True)
n, t0 = 0, time.perf_counter()
while time.perf_counter() - t0 < float(sys.argv[1]):
    for _ in range(64):
        build()
    n += 64
print("%.0f" % (n / (time.perf_counter() - t0)))
PY
)
printf '%-40s %10.0f examples/s\n' "peer: python3-protobuf build+serialize" "$py_rate"
awk -v c="$c_rate" -v p="$py_rate" 'BEGIN { printf "ratio builder / python3-protobuf:  %.2f\n", c / p }'
# bench/run.sh's table: the C builder must beat python3-protobuf's
awk -v c="$c_rate" -v p="$py_rate" 'BEGIN { printf "RATIO example_builder_vs_python3_protobuf %.2f 1\n", c / p }'
