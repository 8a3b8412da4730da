#!/usr/bin/env python3
"""The end-to-end table of docs/performance.md, made from the two files of one device call
(scripts/device.sh, bench stage): ConvScope's best end-to-end variant at each batch size beside
its peer -- PyTorch doing the same work compiled into one CUDA graph, FP32 and TF32, and eager --
and beside its floors. Results are data: the table is made from the files, never typed.

    python3 scripts/end_to_end_table.py bench.json pytorch.json
    python3 scripts/end_to_end_table.py --update docs/performance.md

--update rewrites, in a Markdown file, every block between a line
<!-- end-to-end-table: BENCH.json PYTORCH.json --> (paths from the repository's root) and a line
<!-- end-to-end-table end --> with the table made from the files it names; --check says whether
every such block is what the files give (a test runs it on docs/performance.md).

bench.json: convscope-cli bench --json (docs/benchmark-json.md); its end_to_end_s is host clock.
pytorch.json: scripts/pytorch_reference.py (its schema at that file's top). The PyTorch rows
that the comparison uses are host clock too (peer_host_ms: replay up to the synchronize); their
GPU times (CUDA events, peer_ms) are a row of their own.

Floors at each batch size, both lower bounds on the end-to-end time (the upload overlaps the
compute, so the larger one is the floor, not their sum):
  upload: the uint8 28x28 pictures (784 bytes each) over the pinned host-to-device bandwidth
          that pytorch_reference.py measured (pinned_h2d_gbytes_per_s; the benchmark JSON
          records no pinned figure);
  conv bytes: the bytes the best variant's conv stages move at that batch size, over the
          device-to-device copy bandwidth measured there (copy_gbytes_per_s, which counts bytes
          read plus written): each stage's input read, its weights read and what it wrote
          (output_elements: the pooled output where the variant fused the pooling), 4-byte
          floats; one kernel for the whole network reads the uint8 pictures instead of a float
          input and writes the scores. A stage whose file does not say what it wrote (an older
          file) counts its full-size output. The same rule as runConvBytes and
          endToEndFloorOfBytes in app/core/engine/end_to_end_breakdown.cpp.
"""
import json
import os
import re
import sys

PICTURE_BYTES = 28 * 28  # one uint8 Fashion-MNIST picture, as ConvScope's end to end uploads it
PEER_ROWS = (("compiled_graph_fp32", "PyTorch compiled + CUDA graph, FP32 (TF32 off)"),
             ("compiled_graph_tf32", "PyTorch compiled + CUDA graph, TF32"))


class TableError(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        raise TableError(f"{path}: cannot read it as JSON ({error})")


def number(value):
    """A figure, or None where the file holds none (a failed or skipped mode records a string)."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def conv_layer_shapes(bench, bench_path):
    """The conv problems of a run that ran each conv layer as its own stage (a whole-network
    stage has one entry for every layer), for the bytes floor at any batch size."""
    candidates = [r["layers"] for r in bench["runs"] if r.get("layers")]
    if not candidates:
        raise TableError(f"{bench_path}: no run has conv layers, so there is no bytes floor")
    return [layer["problem"] for layer in max(candidates, key=len)]


def conv_bytes(problems, batch):
    """Bytes every conv layer must move at this batch size: input, weights, full-size output."""
    total = 0
    for p in problems:
        per_image = p["in_channels"] * p["in_height"] * p["in_width"] + \
            p["out_channels"] * p["out_height"] * p["out_width"]
        weights = p["out_channels"] * p["in_channels"] * p["kernel_height"] * p["kernel_width"]
        total += 4 * (batch * per_image + weights)
    return total


def output_elements(problem):
    return problem["batch"] * problem["out_channels"] * problem["out_height"] * problem["out_width"]


def conv_nodes(bench):
    """The conv layers' node names, as the runs of bench.json list them."""
    return {layer.get("node") for r in bench["runs"] for layer in r.get("layers", [])}


def is_whole_network(run, convs):
    """One stage that applied another conv layer of the network in its own kernel: the whole
    network in one kernel (pictures in, scores out)."""
    layers = run.get("layers", [])
    return len(layers) == 1 and any(node in convs for node in layers[0].get("fused_nodes") or [])


def run_conv_bytes(run, convs, picture_bytes=PICTURE_BYTES):
    """Bytes one run's conv stages move at the run's batch size (its layers' own batch): each
    stage's input read, its weights read and what it wrote (output_elements; the full conv output
    where the file does not say), 4-byte floats; a whole-network kernel reads the uint8 pictures."""
    whole = is_whole_network(run, convs)
    total = 0
    for layer in run.get("layers", []):
        p = layer["problem"]
        written = layer.get("output_elements")
        if not isinstance(written, int) or isinstance(written, bool) or written <= 0:
            written = output_elements(p)
        weights = p["out_channels"] * p["in_channels"] * p["kernel_height"] * p["kernel_width"]
        read = p["batch"] * picture_bytes if whole else \
            4 * p["batch"] * p["in_channels"] * p["in_height"] * p["in_width"]
        total += read + 4 * (weights + written)
    return total


def floors_of_bytes_ms(moved_bytes, ref, batch):
    """{"upload": ms or None, "conv_bytes": ms or None, "floor": the larger, or None}."""
    pinned = number(ref.get("pinned_h2d_gbytes_per_s"))
    copy = number(ref.get("copy_gbytes_per_s"))
    upload = batch * PICTURE_BYTES / (pinned * 1e9) * 1e3 if pinned else None
    moved = moved_bytes / (copy * 1e9) * 1e3 if copy and moved_bytes is not None else None
    known = [f for f in (upload, moved) if f is not None]
    return {"upload": upload, "conv_bytes": moved, "floor": max(known) if known else None}


def floors_ms(problems, ref, batch):
    """The floors when every conv layer writes its full-size output (conv_bytes)."""
    return floors_of_bytes_ms(conv_bytes(problems, batch), ref, batch)


def variant_floors_ms(bench, variant, ref, batch):
    """The floors of one variant at this batch size: the bytes its own conv stages move."""
    run = next((r for r in bench["runs"] if r["variant"] == variant and r["batch"] == batch
                and r.get("layers")), None)
    moved = run_conv_bytes(run, conv_nodes(bench)) if run else None
    return floors_of_bytes_ms(moved, ref, batch)


def best_convscope(bench, batch):
    """(variant, ms) of the fastest end to end at this batch; None where no run measured it
    (older files hold 0 there)."""
    timed = [(r["end_to_end_s"]["median"] * 1e3, r["variant"]) for r in bench["runs"]
             if r["batch"] == batch and isinstance(r.get("end_to_end_s"), dict)
             and number(r["end_to_end_s"].get("median"))]
    if not timed:
        return None
    ms, variant = min(timed)
    return variant, ms


def peer_ms(ref, key, mode, batch):
    return number(ref.get(key, {}).get(mode, {}).get(str(batch)))


def cell(ms):
    if ms is None:
        return "-"
    return f"{ms:.3f}" if ms >= 0.001 else f"{ms:.1e}"  # a floor at batch 1 is microseconds or less


def table(bench, ref, bench_path="bench.json", ref_path="pytorch.json"):
    """The Markdown table and its notes, as one string."""
    if bench.get("device") != ref.get("device"):
        raise TableError(f"{bench_path} was measured on '{bench.get('device')}' and {ref_path} on "
                         f"'{ref.get('device')}': the peer must come from the same call")
    batches = sorted({r["batch"] for r in bench["runs"]} & {int(b) for b in ref.get("batches", [])})
    if not batches:
        raise TableError(f"{bench_path} and {ref_path} share no batch size")
    conv_layer_shapes(bench, bench_path)  # refuses a file without conv layers
    best = {b: best_convscope(bench, b) for b in batches}
    # The best variant's own floors: the bytes its conv stages move (run_conv_bytes).
    floors = {b: variant_floors_ms(bench, best[b][0], ref, b) if best[b] else floors_of_bytes_ms(None, ref, b)
              for b in batches}

    lines = [f"Device: {bench['device']} ({bench_path}: {bench.get('date', '?')}, median of "
             f"{bench.get('repeats', '?')}; PyTorch {ref.get('torch', '?')}). Milliseconds, host clock "
             "unless said; pinned uint8 28x28 pictures in, probabilities in pinned host memory out.", ""]
    lines.append("| | " + " | ".join(f"batch {b:,}" for b in batches) + " |")
    lines.append("| --- |" + " ---: |" * len(batches))

    def row(name, cells):
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    row("ConvScope end to end, best variant",
        [f"{best[b][1]:.3f} ({best[b][0]})" if best[b] else "-" for b in batches])
    for mode, name in PEER_ROWS:
        row(name, [cell(peer_ms(ref, "peer_host_ms", mode, b)) for b in batches])
    for mode, name in PEER_ROWS:
        row(name + ", GPU time (CUDA events)",
            [cell(peer_ms(ref, "peer_ms", mode, b)) for b in batches])
    row("PyTorch eager, no graph (CUDA events)",
        [cell(number(ref.get("end_to_end_ms", {}).get(str(b)))) for b in batches])
    for mode, name in PEER_ROWS:
        ratios = []
        for b in batches:
            peer = peer_ms(ref, "peer_host_ms", mode, b)
            ratios.append(f"{peer / best[b][1]:.2f}x" if peer and best[b] else "-")
        row(f"ConvScope's speed-up over {name.split(', ', 1)[1]}", ratios)
    row("floor: upload (bytes / pinned bandwidth)", [cell(floors[b]["upload"]) for b in batches])
    row("floor: conv bytes / HBM bandwidth", [cell(floors[b]["conv_bytes"]) for b in batches])
    row("ConvScope best, x its floor",
        [f"{best[b][1] / floors[b]['floor']:.1f}x" if best[b] and floors[b]["floor"] else "-" for b in batches])
    for mode, name in PEER_ROWS:
        checks = []
        for b in batches:
            diff = number(ref.get("peer_max_abs_diff", {}).get(mode, {}).get(str(b)))
            same = number(ref.get("peer_predictions_equal", {}).get(mode, {}).get(str(b)))
            checks.append(f"{diff:.1e}, {same:,}/{b:,}" if diff is not None and same is not None else "-")
        row(f"{name.split(', ', 1)[1]}: max abs diff, predictions equal to eager FP32", checks)

    pinned = number(ref.get("pinned_h2d_gbytes_per_s"))
    copy = number(ref.get("copy_gbytes_per_s"))
    lines += ["", f"Bandwidths measured by {ref_path} in the same call: pinned host-to-device "
              + (f"{pinned:.1f} GB/s" if pinned else "not recorded") + ", device-to-device copy "
              + (f"{copy:.0f} GB/s" if copy else "not recorded") + " (bytes read plus written).",
              "", "The floors are the best variant's: its conv stages' bytes (each stage's input and "
              "weights read, what it wrote -- the pooled output where it fuses the pooling; one kernel for "
              "the whole network reads the uint8 pictures and writes the scores) over that copy bandwidth, "
              "and the pictures over the pinned bandwidth; the larger is the floor."]
    failures = [f"{mode} at batch {b}: {ref['peer_ms'][mode][str(b)]}"
                for mode, _ in PEER_ROWS for b in batches
                if isinstance(ref.get("peer_ms", {}).get(mode, {}).get(str(b)), str)]
    if ref.get("peer_error"):
        failures.append(ref["peer_error"])
    if failures:
        lines += ["", "PyTorch modes without a figure: " + "; ".join(failures) + "."]
    return "\n".join(lines) + "\n"


BLOCK = re.compile(r"(<!-- end-to-end-table: (\S+) (\S+) -->\n)(.*?)(<!-- end-to-end-table end -->)", re.S)


def updated(text, root):
    """text with every marked block made again from the files it names (relative to root)."""
    def block(match):
        bench, ref = match.group(2), match.group(3)
        made = table(load(os.path.join(root, bench)), load(os.path.join(root, ref)), bench, ref)
        return match.group(1) + "\n" + made + "\n" + match.group(5)
    result, count = BLOCK.subn(block, text)
    if count == 0:
        raise TableError("no <!-- end-to-end-table: BENCH PYTORCH --> block in it")
    return result


def update_file(path, check):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        with open(path) as f:
            text = f.read()
    except OSError as error:
        raise TableError(f"{path}: cannot read it ({error})")
    made = updated(text, root)
    if check:
        if made != text:
            sys.exit(f"end_to_end_table.py: {path}: a table differs from what its files give (run --update)")
        return
    with open(path + ".tmp", "w") as f:
        f.write(made)
    os.replace(path + ".tmp", path)


def main(argv):
    if len(argv) == 3 and argv[1] in ("--update", "--check"):
        try:
            update_file(argv[2], argv[1] == "--check")
        except TableError as error:
            sys.exit(f"end_to_end_table.py: {argv[2]}: {error}")
        return
    if len(argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    try:
        sys.stdout.write(table(load(argv[1]), load(argv[2]), argv[1], argv[2]))
    except TableError as error:
        sys.exit(f"end_to_end_table.py: {error}")
    except (KeyError, TypeError) as error:
        sys.exit(f"end_to_end_table.py: {argv[1]} or {argv[2]} lacks an expected field: {error!r}")


if __name__ == "__main__":
    main(sys.argv)
