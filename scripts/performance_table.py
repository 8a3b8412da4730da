"""Turns a benchmark JSON (convscope-cli bench) and PyTorch's reference figures
(scripts/pytorch_reference.py) into the Markdown tables of docs/performance.md: for each conv
layer the two floors -- compulsory bytes over the measured copy bandwidth, FLOPs over the
datasheet peak of the variant's arithmetic (FP32 FFMA, TF32 tensor cores; 3xTF32 does three
TF32 products) -- and every variant's op time as a multiple of the larger floor. A stage that
fused a pooling writes only the pooled output, so its bytes floor is lower. Devices without
datasheet figures here fall back to the measured FP32 matrix-product rate.

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


# Datasheet peaks, FLOP/s (multiply-add = 2), dense. H100 SXM5: 132 SMs x 128 FP32 lanes x 2 x
# 1.98 GHz; TF32 tensor cores 494.7 TFLOP/s (NVIDIA H100 datasheet, without sparsity).
DATASHEET = {"NVIDIA H100 80GB HBM3": {"FP32": 66.9e12, "TF32": 494.7e12}}
TF32_PRODUCTS = {"FP32": 0, "TF32": 1, "3xTF32": 3}


def flop_rate(device, arithmetic, measured_fp32):
    """FLOP/s the variant's products can reach at best, and how many TF32 products a FLOP costs."""
    peaks = DATASHEET.get(device, {"FP32": measured_fp32})
    if TF32_PRODUCTS.get(arithmetic, 0) and "TF32" in peaks:
        return peaks["TF32"] / TF32_PRODUCTS[arithmetic]
    return peaks["FP32"]


def layer_floor(layer, bandwidth, rate):
    p = layer["problem"]
    out = layer.get("output_elements", p["batch"] * p["out_channels"] * p["out_height"] * p["out_width"])
    moved = 4 * (p["batch"] * p["in_channels"] * p["in_height"] * p["in_width"]
                 + p["out_channels"] * p["in_channels"] * p["kernel_height"] * p["kernel_width"] + out)
    return max(moved / bandwidth, p["flops"] / rate) * 1e3


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
          f"{ref['fp32_matmul_tflops']:.1f} TFLOP/s. FLOP floors use the datasheet peaks: "
          + (", ".join(f"{k} {v / 1e12:.1f} TFLOP/s" for k, v in DATASHEET[bench["device"]].items())
             if bench["device"] in DATASHEET else "none known here, so the measured FP32 rate") + ".\n")
    floors = []
    print("| layer | shape | GFLOP | MB moved | bytes floor (ms) | FLOP floor (ms) | floor (ms) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for i, layer in enumerate(runs[0]["layers"]):
        p = layer["problem"]
        moved = 4 * (p["batch"] * p["in_channels"] * p["in_height"] * p["in_width"]
                     + p["out_channels"] * p["in_channels"] * p["kernel_height"] * p["kernel_width"]
                     + p["batch"] * p["out_channels"] * p["out_height"] * p["out_width"])
        bytes_ms = moved / bandwidth * 1e3
        flops_ms = p["flops"] / flop_rate(bench["device"], "FP32", fp32) * 1e3
        floors.append(max(bytes_ms, flops_ms))
        shape = (f"{p['in_channels']}x{p['in_height']}x{p['in_width']} -> "
                 f"{p['out_channels']}x{p['out_height']}x{p['out_width']}, k{p['kernel_height']}")
        print(f"| conv{i + 1} | {shape} | {p['flops'] / 1e9:.1f} | {moved / 1e6:.0f} | {bytes_ms:.3f} | "
              f"{flops_ms:.3f} | {floors[-1]:.3f} |")

    torch_fp32 = pytorch_at(ref, "fp32", batch)
    print("\nA \"+\" marks a variant whose conv kernels also applied the activation and pooling (its times "
          "cover them, its floors count only the pooled output); its x floor is against its own floors.")
    print("\n| variant | conv1 (ms) | x floor | conv2 (ms) | x floor | conv1+conv2 (ms) | speed-up over cudnn | accuracy |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    cudnn = next((r for r in runs if r["variant"] == "cudnn"), None)
    cudnn_sum = sum(l["op_time_s"]["median"] for l in cudnn["layers"]) * 1e3 if cudnn else None
    rows = [("PyTorch F.conv2d (cuDNN, FP32)", [torch_fp32["conv1"], torch_fp32["conv2"]], None, floors)]
    # A whole-network variant has one stage for every layer: its own table below.
    whole = [r for r in runs if len(r["layers"]) == 1 and len(r["layers"][0].get("fused_nodes", [])) > 2]
    for r in runs:
        if r in whole:
            continue
        rate = flop_rate(bench["device"], r.get("arithmetic", "FP32"), fp32)
        name = r["variant"] + ("" if r.get("arithmetic", "FP32") == "FP32" else f" ({r['arithmetic']})")
        fused = any(l.get("fused_nodes") for l in r["layers"])
        rows.append((name + (" +" if fused else ""), [l["op_time_s"]["median"] * 1e3 for l in r["layers"]],
                     r["accuracy"], [layer_floor(l, bandwidth, rate) for l in r["layers"]]))
    for name, times, accuracy, floors in rows:
        total = sum(times)
        cells = " | ".join(f"{t:.3f} | {t / f:.1f}x" for t, f in zip(times, floors))
        speed = f"{cudnn_sum / total:.2f}x" if cudnn_sum else "-"
        acc = f"{accuracy:.4f}" if accuracy is not None else "-"
        print(f"| {name} | {cells} | {total:.3f} | {speed} | {acc} |")
    if whole:
        # The stage's FLOPs and compulsory bytes (input, every weight, output) follow from its
        # recorded rates: gflops x time, gbytes_per_s x time.
        print("\nThe whole network in one kernel (every layer, from the float batch; its FLOPs and compulsory "
              "bytes -- the input, every weight and the scores -- against the same ceilings):")
        print("\n| variant | whole network (ms) | GFLOP | MB moved | floor (ms) | x floor | accuracy |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in whole:
            layer = r["layers"][0]
            seconds = layer["op_time_s"]["median"]
            flops = layer["gflops"] * 1e9 * seconds
            moved = layer["gbytes_per_s"] * 1e9 * seconds
            rate = flop_rate(bench["device"], r.get("arithmetic", "FP32"), fp32)
            floor_ms = max(flops / rate, moved / bandwidth) * 1e3
            print(f"| {r['variant']} | {seconds * 1e3:.3f} | {flops / 1e9:.1f} | {moved / 1e6:.0f} | {floor_ms:.3f} | "
                  f"{seconds * 1e3 / floor_ms:.1f}x | {r['accuracy']:.4f} |")
    print("\nEnd to end: 8-bit 28x28 images in pinned host memory to probabilities in host memory "
          "(g: a CUDA graph replayed), against PyTorch from pinned uint8 in the same session:")
    batches = sorted({r["batch"] for r in bench["runs"]})  # batch 1 too where the benchmark ran it
    print("\n| variant | " + " | ".join(f"batch {b:,} (ms)" for b in batches) + " |")
    print("| --- |" + " ---: |" * len(batches))
    e2e = ref.get("end_to_end_ms", {})
    if e2e:
        print("| PyTorch (eager FP32, from pinned uint8) | " +
              " | ".join(f"{e2e[str(b)]:.3f}" if isinstance(e2e.get(str(b)), (int, float)) else "-"
                         for b in batches) + " |")
    for variant in dict.fromkeys(r["variant"] for r in bench["runs"]):
        cells = []
        for b in batches:
            r = next((x for x in bench["runs"] if x["variant"] == variant and x["batch"] == b), None)
            if not r or "end_to_end_s" not in r:
                cells.append("-")
            else:
                cells.append(f"{r['end_to_end_s']['median'] * 1e3:.3f}" + (" g" if r.get("end_to_end_replayed") else ""))
        print(f"| {variant} | " + " | ".join(cells) + " |")
    tf32 = pytorch_at(ref, "tf32", batch)
    print(f"\nPyTorch at batch {batch} with TF32 allowed (its default for convolutions): conv1 {tf32['conv1']:.3f} ms, "
          f"conv2 {tf32['conv2']:.3f} ms.")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 10000)
