"""Turns a benchmark JSON (convscope-cli bench) and PyTorch's reference figures
(scripts/pytorch_reference.py) into the Markdown tables of docs/performance.md: for each conv
layer the two floors -- compulsory bytes over the measured copy bandwidth, FLOPs over the
measured FP32 rate -- and every variant's op time as a multiple of the larger floor.

usage: python3 scripts/performance_table.py bench.json pytorch.json [batch]
PyTorch's row is its figure at the same batch size (pytorch.json holds one per batch).
"""
import json
import sys


def pytorch_at(ref, precision, batch):
    """PyTorch's conv times at this batch size; refuses a file that has none for it."""
    figures = ref["conv_ms"][precision]
    if str(batch) not in figures:
        sys.exit(f"PyTorch's reference has no {precision} figures at batch {batch} "
                 f"(it has {', '.join(figures) or 'none'}): run scripts/pytorch_reference.py with that batch")
    return figures[str(batch)]


def main(bench_path, reference_path, batch=10000):
    bench = json.load(open(bench_path))
    ref = json.load(open(reference_path))
    bandwidth = ref["copy_gbytes_per_s"] * 1e9  # bytes/s, counting bytes read plus written
    fp32 = ref["fp32_matmul_tflops"] * 1e12      # FLOP/s, an FP32 matrix product (no TF32)
    runs = [r for r in bench["runs"] if r["batch"] == batch]
    if not runs:
        sys.exit(f"no runs at batch {batch} in {bench_path}")

    print(f"Device: {bench['device']} (driver {bench['driver']}, CUDA {bench['cuda_runtime']}, "
          f"cuDNN {bench['cudnn']}), {bench['date']}; batch {batch}; median of {bench['repeats']} runs.\n")
    print(f"Ceilings measured there: copy {ref['copy_gbytes_per_s']:.0f} GB/s, FP32 matrix product "
          f"{ref['fp32_matmul_tflops']:.1f} TFLOP/s.\n")
    floors = []
    print("| layer | shape | GFLOP | MB moved | bytes floor (ms) | FLOP floor (ms) | floor (ms) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for i, layer in enumerate(runs[0]["layers"]):
        p = layer["problem"]
        moved = 4 * (p["batch"] * p["in_channels"] * p["in_height"] * p["in_width"]
                     + p["out_channels"] * p["in_channels"] * p["kernel_height"] * p["kernel_width"]
                     + p["batch"] * p["out_channels"] * p["out_height"] * p["out_width"])
        bytes_ms = moved / bandwidth * 1e3
        flops_ms = p["flops"] / fp32 * 1e3
        floors.append(max(bytes_ms, flops_ms))
        shape = (f"{p['in_channels']}x{p['in_height']}x{p['in_width']} -> "
                 f"{p['out_channels']}x{p['out_height']}x{p['out_width']}, k{p['kernel_height']}")
        print(f"| conv{i + 1} | {shape} | {p['flops'] / 1e9:.1f} | {moved / 1e6:.0f} | {bytes_ms:.3f} | "
              f"{flops_ms:.3f} | {floors[-1]:.3f} |")

    torch_fp32 = pytorch_at(ref, "fp32", batch)
    print("\n| variant | conv1 (ms) | x floor | conv2 (ms) | x floor | conv1+conv2 (ms) | speed-up over cudnn | accuracy |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    cudnn = next((r for r in runs if r["variant"] == "cudnn"), None)
    cudnn_sum = sum(l["op_time_s"]["median"] for l in cudnn["layers"]) * 1e3 if cudnn else None
    rows = [("PyTorch F.conv2d (cuDNN, FP32)", [torch_fp32["conv1"], torch_fp32["conv2"]], None)]
    rows += [(r["variant"], [l["op_time_s"]["median"] * 1e3 for l in r["layers"]], r["accuracy"]) for r in runs]
    for name, times, accuracy in rows:
        total = sum(times)
        cells = " | ".join(f"{t:.3f} | {t / f:.1f}x" for t, f in zip(times, floors))
        speed = f"{cudnn_sum / total:.2f}x" if cudnn_sum else "-"
        acc = f"{accuracy:.4f}" if accuracy is not None else "-"
        print(f"| {name} | {cells} | {total:.3f} | {speed} | {acc} |")
    tf32 = pytorch_at(ref, "tf32", batch)
    print(f"\nPyTorch at batch {batch} with TF32 allowed (its default for convolutions): conv1 {tf32['conv1']:.3f} ms, "
          f"conv2 {tf32['conv2']:.3f} ms.")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 10000)
