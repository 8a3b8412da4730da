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

The fair peer of ConvScope's end-to-end path (peer_*, pinned_h2d_gbytes_per_s): the same work as
ConvScope's end to end -- uint8 28x28 pictures in PINNED host memory, copied to the GPU, divided
by 255 and resized to 48x48 with half-pixel bilinear taps (F.interpolate, align_corners=False,
is ConvScope's bilinearTaps), the network, the probabilities copied back to pinned host memory
-- with the GPU part compiled by torch.compile (default mode, dynamic=False: one static compile
per batch size, outside the timing) and the WHOLE step (upload, compiled work, download)
captured in ONE CUDA graph, whose replay is timed. Two precisions, each compiled and captured
under its own settings: "fp32" (TF32 off everywhere: cuBLAS, cuDNN, matmul precision "highest")
and "tf32" (TF32 allowed in cuBLAS and cuDNN, matmul precision "high").

    "pinned_h2d_gbytes_per_s": 25.1,         // a 64 MiB pinned host -> device copy, CUDA events
    "peer_ms": {"compiled_graph_fp32": {"1": 0.07, ...}, "compiled_graph_tf32": {...}},
                                             // graph replay, CUDA events, median (or "failed: ...",
                                             // "skipped: ...": the budget ran out)
    "peer_host_ms": {mode: {batch: ms}},     // the same replays, host clock up to the synchronize
                                             // (as ConvScope's end_to_end_s counts)
    "peer_max_abs_diff": {mode: {batch: d}}, // the graph's probabilities against eager FP32 on the
                                             // same pictures (TF32 off), max |difference|
    "peer_predictions_equal": {mode: {batch: n}},  // of the batch's argmax equal to eager FP32's
    "peer_compile_s": {mode: {batch: s}},    // compile + warm-up + capture, wall clock
    "peer_budget_s": 240,                    // modes not started within it are "skipped"
    "peer_error": "failed: ..."              // only when the peer failed outside any one mode

end_to_end_ms stays the eager FP32 peer (no compile, no graph). Environment: PEER_BUDGET_S
(default 240) caps the compile-and-measure time of the peer; PEER_ONLY=1 measures only the peer
and the pinned bandwidth (a quick check).
Run on the GPU machine: python3 scripts/pytorch_reference.py OUT.json [BATCH,BATCH,...]
"""
import json
import os
import sys
import time

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


PEER_MODES = {"compiled_graph_fp32": False, "compiled_graph_tf32": True}  # mode: TF32 allowed


def set_tf32(allowed):
    torch.backends.cuda.matmul.allow_tf32 = allowed
    torch.backends.cudnn.allow_tf32 = allowed
    torch.set_float32_matmul_precision("high" if allowed else "highest")


def pinned_h2d_gbytes_per_s(dev):
    """Host-to-device bandwidth from pinned memory: the input of the upload floor."""
    host = torch.empty(64 << 20, dtype=torch.uint8).pin_memory()
    device_copy = torch.empty(host.numel(), dtype=torch.uint8, device=dev)
    ms = median_ms(lambda: device_copy.copy_(host, non_blocking=True), repeats=20, warmup=3)
    return host.numel() / (ms / 1e3) / 1e9


def host_median_ms(fn, repeats):
    """Host clock from the call to the end of a synchronize, as ConvScope's end_to_end_s counts."""
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[len(times) // 2]


def peer_figures(result, batches, dev):
    """ConvScope's end-to-end work, compiled and replayed as one CUDA graph (see the docstring)."""
    budget_s = float(os.environ.get("PEER_BUDGET_S", "240"))
    result["peer_budget_s"] = budget_s
    keys = ("peer_ms", "peer_host_ms", "peer_max_abs_diff", "peer_predictions_equal", "peer_compile_s")
    for key in keys:
        result[key] = {mode: {} for mode in PEER_MODES}
    began = time.perf_counter()
    net = course_high().to(dev).eval()

    def gpu_work(on_gpu_bytes):  # uint8 (N, 1, 28, 28) on the GPU -> probabilities (N, 10)
        scaled = on_gpu_bytes.float().div(255.0)  # ConvScope divides (x / 255), it does not multiply
        return net(F.interpolate(scaled, size=(48, 48), mode="bilinear", align_corners=False))

    with torch.inference_mode():
        for batch in batches:
            key = str(batch)
            images = torch.randint(0, 256, (batch, 1, 28, 28), dtype=torch.uint8).pin_memory()
            set_tf32(False)
            reference = gpu_work(images.to(dev)).cpu()  # eager FP32, TF32 off
            for mode, tf32 in PEER_MODES.items():
                if time.perf_counter() - began > budget_s:
                    result["peer_ms"][mode][key] = f"skipped: the peer's {budget_s:.0f} s budget ran out"
                    continue
                try:
                    set_tf32(tf32)
                    started = time.perf_counter()
                    torch._dynamo.reset()  # a fresh static compile for this batch size and precision
                    compiled = torch.compile(gpu_work, dynamic=False)
                    static_bytes = torch.empty(images.shape, dtype=torch.uint8, device=dev)
                    probabilities = torch.empty(batch, 10).pin_memory()

                    def step():
                        static_bytes.copy_(images, non_blocking=True)
                        probabilities.copy_(compiled(static_bytes), non_blocking=True)
                    # Compile and warm up on a side stream, as CUDA-graph capture requires.
                    side = torch.cuda.Stream()
                    side.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(side):
                        for _ in range(3):
                            step()
                    torch.cuda.current_stream().wait_stream(side)
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph):
                        step()
                    probabilities.zero_()
                    graph.replay()
                    torch.cuda.synchronize()
                    result["peer_compile_s"][mode][key] = time.perf_counter() - started
                    result["peer_max_abs_diff"][mode][key] = (probabilities - reference).abs().max().item()
                    result["peer_predictions_equal"][mode][key] = int(
                        (probabilities.argmax(1) == reference.argmax(1)).sum().item())
                    repeats = 200 if batch <= 1000 else 50
                    result["peer_ms"][mode][key] = median_ms(graph.replay, repeats=repeats, warmup=10)
                    result["peer_host_ms"][mode][key] = host_median_ms(graph.replay, repeats)
                    del graph
                except Exception as error:  # record it; the other modes and batches still run
                    result["peer_ms"][mode][key] = f"failed: {type(error).__name__}: {error}"[:300]
    set_tf32(False)
    torch._dynamo.reset()


def main(out_path, batches=(100, 1000, 10000)):
    torch.manual_seed(0)
    dev = torch.device("cuda")
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "cudnn": torch.backends.cudnn.version(), "batches": list(batches),
              "conv_ms": {"fp32": {}, "tf32": {}}}
    torch.backends.cudnn.benchmark = True  # search for the fastest algorithm, as the course's framework did
    try:
        result["pinned_h2d_gbytes_per_s"] = pinned_h2d_gbytes_per_s(dev)
    except Exception as error:
        result["pinned_h2d_gbytes_per_s"] = f"failed: {type(error).__name__}: {error}"[:300]
    try:
        peer_figures(result, batches, dev)
    except Exception as error:  # outside any one mode (pinning, the reference): the rest still runs
        result["peer_error"] = f"failed: {type(error).__name__}: {error}"[:300]
    if os.environ.get("PEER_ONLY") == "1":
        with open(out_path, "w") as f:
            json.dump(result, f, indent=2)
        print(json.dumps(result, indent=2))
        return
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
