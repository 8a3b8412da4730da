#!/bin/bash
# Interleaved rounds: ConvScope cpu-onednn (convscope-cli bench) and ONNX Runtime's CPU provider
# (scripts/onnxruntime_cpu_time.py) on EfficientNet-Lite0 and chelsea, on this machine.
# CLI: the convscope-cli to time; PYTHON: a Python with onnxruntime; PHOTOS: a folder holding
# tabby/ with copies of chelsea (bench reads a folder of class subfolders); IMAGE: chelsea itself.
set -euo pipefail
cd "$(dirname "$0")/../../.."
CLI=${CLI:-build/app/cli/convscope-cli}
PYTHON=${PYTHON:-python3}
PHOTOS=${PHOTOS:-/tmp/photofolder}
IMAGE=${IMAGE:-/usr/lib/python3/dist-packages/skimage/data/chelsea.png}
MODEL=data/models/efficientnet-lite0.onnx
for b in 1 64; do
  if [ "$b" = 1 ]; then R=30; W=5; rounds=7; else R=5; W=1; rounds=3; fi
  for i in $(seq 1 "$rounds"); do
    "$CLI" bench --model "$MODEL" --variants cpu-onednn --batches "$b" --repeats "$R" --warmups "$W" \
      --data "$PHOTOS" --json "/tmp/measure-$b-$i.json" >/dev/null 2>&1
    python3 -c "
import json; r = json.load(open('/tmp/measure-$b-$i.json'))['runs'][0]
conv = sum(l['op_time_s']['median'] for l in r['layers'])
print('convscope batch $b round $i: inference median %.2f ms (conv layers %.2f ms)' % (r['inference_s']['median'] * 1e3, conv * 1e3))"
    "$PYTHON" scripts/onnxruntime_cpu_time.py --model "$MODEL" --batch "$b" --image "$IMAGE" --runs "$R" --warmup "$W" 2>&1 |
      tail -1 | sed "s/^/onnxruntime batch $b round $i: /"
  done
done
