#!/usr/bin/env python3
"""ConvScope's CPU variants and ONNX Runtime side by side, on this machine, in the same run.

For each model (course-high, lenet5): the 10,000 Fashion-MNIST test images as one batch, and one
image (the median of many runs). Both sides time inference only, on a batch made beforehand:

- ConvScope: `convscope-cli bench` (its JSON `inference_s`: the whole forward pass on the first N
  test images, resized by ConvScope as the engine always does), per variant.
- ONNX Runtime: `InferenceSession.run` (CPU execution provider, intra-op threads = cores, all graph
  optimisations) on the same images, scaled to [0, 1] and resized with the same bilinear
  half-pixel taps in NumPy; its predictions are checked against ConvScope's accuracy.

The two alternate, round by round, so that a change in the machine's load hits both. ONNX Runtime
comes from PyPI into a virtual environment (.venv-bench, git-ignored) for this benchmark only: no
test and no build uses it.

Writes RESULTS/cpu-benchmark.json and RESULTS/README.md (the table). Usage:
  scripts/cpu_benchmark.py [--cli build/app/cli/convscope-cli] [--out docs/results/DATE-cpu]
                           [--rounds 3] [--repeats 5] [--latency-runs 200]
"""
import argparse
import datetime
import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-bench"
MODELS = ["course-high", "lenet5"]
DATA = Path(os.environ.get("CONVSCOPE_DATA", "/usr/share/datasets/fashion-mnist"))


def ensure_venv():
    """Re-runs this script inside .venv-bench, with onnxruntime and numpy installed from PyPI."""
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    check = subprocess.run([str(python), "-c", "import onnxruntime, numpy"], capture_output=True)
    if check.returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "onnxruntime", "numpy"], check=True)
    os.execv(str(python), [str(python), str(Path(__file__).resolve())] + sys.argv[1:])


def machine():
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"cpu": model, "cores": os.cpu_count(), "kernel": platform.release()}


def read_idx(path):
    import numpy as np

    with gzip.open(path) if str(path).endswith(".gz") else open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def find_idx(stem):
    for name in (stem, stem + ".gz"):
        if (DATA / name).exists():
            return DATA / name
    sys.exit(f"cpu_benchmark: {DATA} has no {stem}[.gz] (set CONVSCOPE_DATA)")


def taps(src, dst):
    """ConvScope's (and PyTorch's) half-pixel bilinear taps, in float32 as ConvScope computes them."""
    import numpy as np

    scale = np.float32(src) / np.float32(dst)
    source = scale * (np.arange(dst, dtype=np.float32) + np.float32(0.5)) - np.float32(0.5)
    source = np.maximum(source, np.float32(0))
    low = np.minimum(source.astype(np.int64), src - 1)
    high = np.minimum(low + 1, src - 1)
    high_weight = np.clip(source - low.astype(np.float32), 0, 1).astype(np.float32)
    return low, high, (np.float32(1) - high_weight).astype(np.float32), high_weight


def prepare(images, height, width):
    """x / 255 in float32, then the bilinear resize, as ConvScope's ImageSet::batch does."""
    import numpy as np

    x = images.astype(np.float32) / np.float32(255)
    if x.shape[1:] != (height, width):
        rl, rh, rwl, rwh = taps(x.shape[1], height)
        cl, ch, cwl, cwh = taps(x.shape[2], width)
        top = cwl * x[:, rl][:, :, cl] + cwh * x[:, rl][:, :, ch]
        bottom = cwl * x[:, rh][:, :, cl] + cwh * x[:, rh][:, :, ch]
        x = rwl[None, :, None] * top + rwh[None, :, None] * bottom
    return np.ascontiguousarray(x[:, None, :, :], dtype=np.float32)


def ort_session(model_path):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count()
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])


def time_ort(session, batch, repeats, chunk=None):
    """Seconds of each repetition: the whole batch through session.run, in runs of `chunk` images."""
    import numpy as np

    name = session.get_inputs()[0].name
    chunk = chunk or len(batch)
    run = lambda: np.concatenate([session.run(None, {name: batch[i:i + chunk]})[0] for i in range(0, len(batch), chunk)])
    run()  # warm-up: ONNX Runtime sizes its memory arena on the first runs
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - start)
    return times, out


def time_convscope(cli, model_path, variants, batch, repeats, warmups):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([str(cli), "bench", "--model", str(model_path), "--variants", ",".join(variants), "--batches",
                        str(batch), "--repeats", str(repeats), "--warmups", str(warmups), "--json", f.name],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return json.load(open(f.name))


def summary(samples):
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples), "count": len(samples)}


def main():
    ensure_venv()
    import numpy as np
    import onnxruntime as ort

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", default=str(ROOT / "build" / "app" / "cli" / "convscope-cli"))
    parser.add_argument("--out", default=str(ROOT / "docs" / "results" / f"{datetime.date.today()}-cpu"))
    parser.add_argument("--rounds", type=int, default=3, help="alternations of ONNX Runtime and ConvScope")
    parser.add_argument("--repeats", type=int, default=5, help="timed 10,000-image inferences per round and side")
    parser.add_argument("--latency-runs", type=int, default=200, help="timed one-image inferences per round and side")
    parser.add_argument("--variants", default="cpu-onednn,cpu-im2col-gemm",
                        help="ConvScope variants timed on both batch sizes")
    parser.add_argument("--slow-variants", default="cpu-reference",
                        help="variants timed on one image only (10,000 would take minutes)")
    args = parser.parse_args()
    cli = Path(args.cli)
    if not cli.exists():
        sys.exit(f"cpu_benchmark: {cli} not found (build it, or pass --cli)")
    variants = [v for v in args.variants.split(",") if v]
    slow = [v for v in args.slow_variants.split(",") if v]

    images = read_idx(find_idx("t10k-images-idx3-ubyte"))
    labels = read_idx(find_idx("t10k-labels-idx1-ubyte"))
    result = {"schema": "convscope-cpu-benchmark/1", "date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
              "machine": machine(), "onnxruntime": ort.__version__, "numpy": np.__version__,
              "what_is_timed": "inference only, on images prepared beforehand (the 28x28 images scaled to [0,1] and "
                               "resized bilinearly, half-pixel, to the model's input on both sides): ConvScope's "
                               "`bench` inference_s (one batch, whole forward pass, host clock) and ONNX Runtime's "
                               "session.run (the batch in runs of onnxruntime_images_per_run images, its fastest)",
              "rounds": args.rounds, "models": {}}
    entry_chunk = {}
    for model in MODELS:
        path = ROOT / "data" / "models" / f"{model}.onnx"
        session = ort_session(path)
        shape = session.get_inputs()[0].shape
        batch = prepare(images, int(shape[2]), int(shape[3]))
        one = batch[:1].copy()
        samples = {"onnxruntime": {"10000": [], "1": []}}
        for v in variants + slow:
            samples[v] = {"10000": [], "1": []}
        accuracy = {}
        for round_ in range(args.rounds):
            print(f"{model}: round {round_ + 1} of {args.rounds}", file=sys.stderr)
            if round_ == 0:
                # ONNX Runtime at its best: the whole batch in one run, or in runs of 256 or 64
                # images (smaller runs stay in cache), whichever is fastest here.
                trial = {c: statistics.median(time_ort(session, batch, 2, c)[0]) for c in (10000, 256, 64)}
                ort_chunk = min(trial, key=trial.get)
                entry_chunk[model] = ort_chunk
            times, out = time_ort(session, batch, args.repeats, ort_chunk)
            samples["onnxruntime"]["10000"] += times
            accuracy["onnxruntime"] = float((out.argmax(axis=1) == labels).mean())
            samples["onnxruntime"]["1"] += time_ort(session, one, args.latency_runs)[0]
            for batch_size, repeats, which in ((10000, args.repeats, variants),
                                               (1, args.latency_runs, variants + slow)):
                bench = time_convscope(cli, path, which, batch_size, repeats, 2 if batch_size == 1 else 1)
                for run in bench["runs"]:
                    # Every repetition's time is not in the JSON: the median of each round's runs is.
                    samples[run["variant"]][str(batch_size)].append(run["inference_s"]["median"])
                    if batch_size == 10000:
                        accuracy[run["variant"]] = run["accuracy"]
        entry = {"input": [int(d) if isinstance(d, int) else d for d in shape], "accuracy": accuracy,
                 "onnxruntime_images_per_run": entry_chunk[model], "seconds": {}}
        for side, per_batch in samples.items():
            entry["seconds"][side] = {b: summary(s) for b, s in per_batch.items() if s}
        result["models"][model] = entry

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cpu-benchmark.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "README.md").write_text(markdown(result))
    print(markdown(result))


def markdown(result):
    m = result["machine"]
    lines = [f"# CPU: ConvScope and ONNX Runtime ({result['date'][:10]})", "",
             f"Machine: {m['cpu']}, {m['cores']} cores (Linux {m['kernel']}); ONNX Runtime "
             f"{result['onnxruntime']} (CPU execution provider, {m['cores']} intra-op threads). "
             f"Timed: {result['what_is_timed']}. Medians over {result['rounds']} alternating rounds "
             f"(ConvScope's figure per round is the median of that round's repetitions); "
             f"[cpu-benchmark.json](cpu-benchmark.json) has min and max too.", "",
             "| model | runtime / variant | 10,000 images (s) | one image (µs) | vs ONNX Runtime (10,000 / one) | accuracy |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for model, entry in result["models"].items():
        ort = entry["seconds"]["onnxruntime"]
        for side, per_batch in entry["seconds"].items():
            big = per_batch.get("10000", {}).get("median")
            one = per_batch.get("1", {}).get("median")
            ratio_big = f"{big / ort['10000']['median']:.2f}x" if big else "-"
            ratio_one = f"{one / ort['1']['median']:.2f}x" if one else "-"
            acc = entry["accuracy"].get(side)
            lines.append(f"| {model} | {side} | {big:.3f} | {one * 1e6:.0f} | {ratio_big} / {ratio_one} | "
                         f"{acc:.4f} |" if big else
                         f"| {model} | {side} | - | {one * 1e6:.0f} | - / {ratio_one} | - |")
    lines += ["", "A ratio below 1.00x: ConvScope is faster than ONNX Runtime. ONNX Runtime ran the 10,000 images in "
              "runs of " + ", ".join(f"{e['onnxruntime_images_per_run']} ({m})" for m, e in result["models"].items())
              + " images, its fastest of 10,000, 256 and 64.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
