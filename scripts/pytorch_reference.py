"""PyTorch's own figures for the course's two conv layers on this GPU, and the machine's two
ceilings, measured the way the benchmark measures: warm-up, CUDA events, median of many runs.

Writes JSON: the conv op times through cuDNN at every batch size the benchmark uses (strict FP32,
and with TF32 allowed, PyTorch's default for convolutions), the device-to-device copy bandwidth
and the FP32 matrix-product rate. Schema: conv_ms[precision][batch][layer], batch as a string.
And the whole course-high network (two 7x7 conv + tanh + 2x2 max-pool blocks, two dense layers,
softmax) at every batch size, the ways PyTorch can run it (network_ms[mode][batch]): eager FP32,
eager bf16 channels-last (tensor cores), torch.compile, and CUDA-graph replay, all with the
images already on the GPU; and end to end as ConvScope's target counts it (end_to_end_ms[batch]):
uint8 28x28 images in pinned host memory -> upload -> scale and bilinear resize to 48x48 on the
GPU -> network -> probabilities in host memory. A mode that fails records its error instead.
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


def course_high():
    """The shipped course-high architecture; random weights (times do not depend on them)."""
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 12, 7), torch.nn.Tanh(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(12, 24, 7), torch.nn.Tanh(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(1176, 128), torch.nn.Tanh(), torch.nn.Linear(128, 10),
        torch.nn.Softmax(dim=1))


def network_figures(result, batches, dev):
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    net = course_high().to(dev).eval()
    bf16 = course_high().to(dev).eval().to(dtype=torch.bfloat16, memory_format=torch.channels_last)
    modes = {"eager_fp32": {}, "eager_bf16_channels_last": {}, "compile": {}, "cuda_graph": {}}
    result["network_ms"] = modes
    result["end_to_end_ms"] = {}
    compiled = None
    with torch.inference_mode():
        for batch in batches:
            key = str(batch)
            x = torch.rand(batch, 1, 48, 48, device=dev)

            def attempt(mode, measure):
                try:
                    modes[mode][key] = measure()
                except Exception as error:  # record it; the other modes still run
                    modes[mode][key] = f"failed: {type(error).__name__}: {error}"[:300]

            attempt("eager_fp32", lambda: median_ms(lambda: net(x)))
            xb = x.to(dtype=torch.bfloat16, memory_format=torch.channels_last)
            attempt("eager_bf16_channels_last", lambda: median_ms(lambda: bf16(xb)))

            def compiled_ms():
                nonlocal compiled
                compiled = compiled or torch.compile(net)
                return median_ms(lambda: compiled(x), warmup=10)
            attempt("compile", compiled_ms)

            def graph_ms():
                static_x = x.clone()
                stream = torch.cuda.Stream()
                stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(stream):
                    for _ in range(3):
                        net(static_x)
                torch.cuda.current_stream().wait_stream(stream)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    net(static_x)
                return median_ms(graph.replay)
            attempt("cuda_graph", graph_ms)

            images = torch.randint(0, 256, (batch, 1, 28, 28), dtype=torch.uint8).pin_memory()
            probabilities = torch.empty(batch, 10).pin_memory()

            def end_to_end():
                on_gpu = images.to(dev, non_blocking=True).float().mul_(1.0 / 255)
                resized = F.interpolate(on_gpu, size=(48, 48), mode="bilinear", align_corners=False)
                probabilities.copy_(net(resized), non_blocking=True)
            try:
                result["end_to_end_ms"][key] = median_ms(end_to_end)
            except Exception as error:
                result["end_to_end_ms"][key] = f"failed: {type(error).__name__}: {error}"[:300]


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

    network_figures(result, batches, dev)

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
