"""PyTorch's own figures for the course's two conv layers on this GPU, and the machine's two
ceilings, measured the way the benchmark measures: warm-up, CUDA events, median of many runs.

Writes JSON: the conv op times through cuDNN at every batch size the benchmark uses (strict FP32,
and with TF32 allowed, PyTorch's default for convolutions), the device-to-device copy bandwidth
and the FP32 matrix-product rate. Schema: conv_ms[precision][batch][layer], batch as a string.
Run on the GPU machine: python3 scripts/pytorch_reference.py OUT.json [BATCH,BATCH,...]
"""
import json
import sys

import torch
import torch.nn.functional as F


def median_ms(fn, repeats=50, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def main(out_path, batches=(100, 1000, 10000)):
    torch.manual_seed(0)
    dev = torch.device("cuda")
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "cudnn": torch.backends.cudnn.version(), "batches": list(batches),
              "conv_ms": {"fp32": {}, "tf32": {}}}
    torch.backends.cudnn.benchmark = True  # search for the fastest algorithm, as the course's framework did
    for batch in batches:
        # Fresh random data at each size, never zeros (zeros can run faster than real data).
        layers = {
            "conv1": (torch.rand(batch, 1, 48, 48, device=dev), torch.randn(12, 1, 7, 7, device=dev)),
            "conv2": (torch.rand(batch, 12, 21, 21, device=dev), torch.randn(24, 12, 7, 7, device=dev)),
        }
        for tf32 in (False, True):
            torch.backends.cudnn.allow_tf32 = tf32
            key = "tf32" if tf32 else "fp32"
            result["conv_ms"][key][str(batch)] = {
                name: median_ms(lambda x=x, w=w: F.conv2d(x, w)) for name, (x, w) in layers.items()}
        del layers

    # Ceilings: a large device-to-device copy (bytes read + written) and an FP32 matrix product.
    a = torch.empty(1 << 28, dtype=torch.float32, device=dev)
    b = torch.empty_like(a)
    copy_ms = median_ms(lambda: b.copy_(a), repeats=20)
    result["copy_gbytes_per_s"] = 2 * a.numel() * 4 / (copy_ms / 1e3) / 1e9
    torch.backends.cuda.matmul.allow_tf32 = False
    m = torch.randn(8192, 8192, device=dev)
    n = torch.randn(8192, 8192, device=dev)
    mm_ms = median_ms(lambda: m @ n, repeats=10)
    result["fp32_matmul_tflops"] = 2 * 8192 ** 3 / (mm_ms / 1e3) / 1e12

    with open(out_path, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main(sys.argv[1], tuple(int(b) for b in sys.argv[2].split(",")) if len(sys.argv) > 2 else (100, 1000, 10000))
