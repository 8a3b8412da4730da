#!/bin/bash
# interleaved: ConvScope cpu-onednn (bench) and ONNX Runtime on EfficientNet-Lite0, chelsea, 2 cores
cd /work/main
for b in 1 64; do
  if [ $b = 1 ]; then R=30; W=5; rounds=5; else R=5; W=1; rounds=3; fi
  for i in $(seq 1 $rounds); do
    build/app/cli/convscope-cli bench --model data/models/efficientnet-lite0.onnx --variants cpu-onednn --batches $b --repeats $R --warmups $W --data /tmp/photofolder --json /tmp/m-$b-$i.json >/dev/null 2>&1
    python3 -c "
import json;d=json.load(open('/tmp/m-$b-$i.json'));r=d['runs'][0]
L=r['layers']; print('convscope batch $b round $i: inference median %.2f ms (conv layers %.2f ms)'%(r['inference_s']['median']*1e3, sum(l['op_time_s']['median'] for l in L)*1e3))"
    /tmp/effnet-venv/bin/python scripts/onnxruntime_cpu_time.py --model data/models/efficientnet-lite0.onnx --batch $b --image .data/photos/chelsea.png.ppm --runs $R --warmup $W 2>&1 | tail -1 | sed "s/^/onnxruntime batch $b round $i: /"
  done
done
