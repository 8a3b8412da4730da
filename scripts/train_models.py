#!/usr/bin/env python3
"""Train and export the ConvScope demo models on Fashion-MNIST.

Trains three small CNNs on a CUDA GPU, evaluates them on the CPU in float32,
exports them to ONNX and writes metadata next to them:

  models/course-high.onnx, .json   well-trained tanh/max-pool CNN, 48x48 input
  models/course-low.onnx,  .json   same architecture, barely trained
  models/lenet5.onnx,      .json   LeNet-5 (ReLU, average pooling), 28x28 input
  fixtures/course-high-dynamo-op18.onnx   dynamo exporter, opset 18
  fixtures/lenet5-dynamo-op18.onnx        dynamo exporter, opset 18
  fixtures/lenet5-torchscript-op13.onnx   TorchScript exporter, opset 13
  export_report.txt                        structure of every exported file
  results.tar                              models/ and fixtures/ packed together

Usage:
  python3 scripts/train_models.py --data .data/fashion-mnist --out out

The data directory must hold the four gzipped Fashion-MNIST IDX files.
"""

import argparse
import copy
import gzip
import hashlib
import io
import json
import os
import shutil
import struct
import sys
import tarfile
import tempfile
import time
import traceback

# Needed for deterministic cuBLAS; must be set before CUDA is initialised.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

try:
    import onnxruntime as ort  # noqa: E402
except Exception:  # pragma: no cover - optional
    ort = None


NUM_TEST = 10000
FASHION_PREPROCESSING = {"resize": "fit", "invert": "automatic", "value_range": 1, "mean": [0], "std": [1]}
NUM_SAMPLE_PROBS = 8
COURSE_SIZE = 48
INPUT_NAME = "input"
OUTPUT_NAME = "probabilities"

ERRORS = []  # (stage, message)


def log(*a):
    print(*a, flush=True)


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------

def read_idx(path, expected_magic):
    with gzip.open(path, "rb") as fh:
        data = fh.read()
    magic = struct.unpack(">I", data[:4])[0]
    if magic != expected_magic:
        raise ValueError(f"{path}: magic {magic}, expected {expected_magic}")
    # byte 2 is the element type (0x08 = unsigned byte), byte 3 the number of dims
    if data[2] != 0x08:
        raise ValueError(f"{path}: element type 0x{data[2]:02x}, expected 0x08 (ubyte)")
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    offset = 4 + 4 * ndim
    count = int(np.prod(dims))
    arr = np.frombuffer(data, dtype=np.uint8, count=count, offset=offset)
    if arr.size != count or len(data) != offset + count:
        raise ValueError(f"{path}: size mismatch (dims {dims}, {len(data)} bytes)")
    return arr.reshape(dims).copy()


def load_fashion_mnist(data_dir):
    def p(name):
        return os.path.join(data_dir, name)

    xtr = read_idx(p("train-images-idx3-ubyte.gz"), 2051)
    ytr = read_idx(p("train-labels-idx1-ubyte.gz"), 2049)
    xte = read_idx(p("t10k-images-idx3-ubyte.gz"), 2051)
    yte = read_idx(p("t10k-labels-idx1-ubyte.gz"), 2049)
    assert xtr.shape == (60000, 28, 28) and ytr.shape == (60000,)
    assert xte.shape == (10000, 28, 28) and yte.shape == (10000,)

    def to_tensor(x):
        # float32, NCHW, pixel / 255 in [0, 1]
        return torch.from_numpy(x.astype(np.float32) / np.float32(255.0)).unsqueeze(1)

    return (to_tensor(xtr), torch.from_numpy(ytr.astype(np.int64)),
            to_tensor(xte), torch.from_numpy(yte.astype(np.int64)))


def resize48(x):
    return F.interpolate(x, size=(COURSE_SIZE, COURSE_SIZE), mode="bilinear",
                         align_corners=False)


# --------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------

def make_course():
    return nn.Sequential(
        nn.Conv2d(1, 12, 7),
        nn.Tanh(),
        nn.MaxPool2d(2),
        nn.Conv2d(12, 24, 7),
        nn.Tanh(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(24 * 7 * 7, 128),
        nn.Tanh(),
        nn.Linear(128, 10),
        nn.Softmax(dim=1),
    )


def make_lenet5():
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2),
        nn.ReLU(),
        nn.AvgPool2d(2),
        nn.Conv2d(6, 16, 5),
        nn.ReLU(),
        nn.AvgPool2d(2),
        nn.Flatten(),
        nn.Linear(400, 120),
        nn.ReLU(),
        nn.Linear(120, 84),
        nn.ReLU(),
        nn.Linear(84, 10),
        nn.Softmax(dim=1),
    )


def logits_of(model):
    """The network without its final Softmax (shares the parameters)."""
    return model[:-1]


@torch.no_grad()
def gpu_accuracy(model, x, y, batch=5000):
    model.eval()
    correct = 0
    for i in range(0, x.shape[0], batch):
        correct += (logits_of(model)(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum()
    model.train()
    return int(correct) / x.shape[0]


def train_well(name, model, xtr, ytr, xte, yte, epochs, lr, batch, seed):
    """Adam + cosine learning-rate decay, fixed number of epochs, no augmentation."""
    dev = xtr.device
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    n = xtr.shape[0]
    steps_per_epoch = (n + batch - 1) // batch
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * steps_per_epoch)
    net = logits_of(model)
    model.train()
    for ep in range(1, epochs + 1):
        t0 = time.time()
        perm = torch.randperm(n, device=dev, generator=gen)
        loss_sum = torch.zeros((), device=dev)
        for i in range(0, n, batch):
            idx = perm[i:i + batch]
            loss = F.cross_entropy(net(xtr[idx]), ytr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += loss.detach() * idx.numel()
        acc = gpu_accuracy(model, xte, yte)
        log(f"[{name}] epoch {ep:2d}/{epochs} loss {loss_sum.item() / n:.4f} "
            f"test acc (GPU) {acc:.4f} lr {sched.get_last_lr()[0]:.2e} {time.time() - t0:.1f}s")
    return {"epochs": epochs, "optimizer": "Adam (cosine learning-rate decay to 0)",
            "learning_rate": lr, "batch_size": batch}


def train_weak(name, make, seed, xtr, ytr, xte, yte, lo=0.64, hi=0.70,
               lrs=(0.01, 0.004, 0.0015), batch=64, eval_every=2, max_steps=30000):
    """Plain SGD, stopped as soon as the GPU test accuracy lies in [lo, hi].

    If one evaluation step jumps over the window, start again (same seed) with the
    next, smaller learning rate.  The window is narrower than the target 0.62..0.72
    so the CPU re-evaluation cannot fall outside it.
    """
    dev = xtr.device
    n = xtr.shape[0]
    for lr in lrs:
        torch.manual_seed(seed)
        model = make().to(dev)
        gen = torch.Generator(device=dev)
        gen.manual_seed(seed)
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        net = logits_of(model)
        model.train()
        step = 0
        acc = gpu_accuracy(model, xte, yte)
        log(f"[{name}] lr {lr}: step 0 test acc (GPU) {acc:.4f}")
        done = False
        overshoot = False
        while step < max_steps and not done and not overshoot:
            perm = torch.randperm(n, device=dev, generator=gen)
            for i in range(0, n - batch + 1, batch):
                idx = perm[i:i + batch]
                loss = F.cross_entropy(net(xtr[idx]), ytr[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                step += 1
                if step % eval_every == 0:
                    acc = gpu_accuracy(model, xte, yte)
                    if step % 100 == 0:
                        log(f"[{name}] lr {lr}: step {step} loss {loss.item():.4f} "
                            f"test acc (GPU) {acc:.4f}")
                    if lo <= acc <= hi:
                        done = True
                        break
                    if acc > hi:
                        overshoot = True
                        break
                if step >= max_steps:
                    break
        if done:
            log(f"[{name}] stopped at step {step} (lr {lr}), test acc (GPU) {acc:.4f}")
            return model, {"steps": step, "optimizer": "SGD (no momentum)",
                           "learning_rate": lr, "batch_size": batch,
                           "eval_every_steps": eval_every}
        log(f"[{name}] lr {lr}: {'overshot' if overshoot else 'never reached'} the window "
            f"(step {step}, acc {acc:.4f}); retrying")
    raise RuntimeError(f"{name}: could not stop inside [{lo}, {hi}]")


# --------------------------------------------------------------------------
# CPU evaluation
# --------------------------------------------------------------------------

@torch.no_grad()
def cpu_evaluate(model_cpu, x28_cpu, y_cpu, resize):
    model_cpu.eval()
    probs = []
    for i in range(0, x28_cpu.shape[0], 500):
        xb = x28_cpu[i:i + 500]
        if resize:
            xb = resize48(xb)
        probs.append(model_cpu(xb))
    p = torch.cat(probs)
    pred = p.argmax(1)
    correct = int((pred == y_cpu).sum())
    top2 = p.topk(2, dim=1).values
    margin = (top2[:, 0] - top2[:, 1])
    return p, pred, correct, margin


# --------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------

def save_self_contained(src_path, dst_path):
    """Load (pulling in any external data) and re-save with every tensor embedded."""
    m = onnx.load(src_path, load_external_data=True)
    for t in m.graph.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            raise RuntimeError(f"{src_path}: initializer {t.name} still external")
        del t.external_data[:]
    onnx.save_model(m, dst_path, save_as_external_data=False)
    return m


def check(path):
    m = onnx.load(path)
    try:
        onnx.checker.check_model(m, full_check=True)
        return "onnx.checker.check_model(full_check=True): OK"
    except Exception as e:
        onnx.checker.check_model(m)
        return f"onnx.checker.check_model: OK (full_check failed: {e})"


def export_torchscript(model_cpu, in_shape, path, opset):
    tmpd = tempfile.mkdtemp(prefix="ts_export_")
    tmp = os.path.join(tmpd, "model.onnx")
    dummy = torch.randn(2, *in_shape)
    torch.onnx.export(
        model_cpu, (dummy,), tmp,
        dynamo=False,
        opset_version=opset,
        input_names=[INPUT_NAME],
        output_names=[OUTPUT_NAME],
        dynamic_axes={INPUT_NAME: {0: "batch"}, OUTPUT_NAME: {0: "batch"}},
        do_constant_folding=True,
        export_params=True,
    )
    files = sorted(os.listdir(tmpd))
    save_self_contained(tmp, path)
    shutil.rmtree(tmpd, ignore_errors=True)
    notes = [f"torch.onnx.export(dynamo=False, opset_version={opset}, "
             f"dynamic_axes={{input:{{0:'batch'}}, probabilities:{{0:'batch'}}}}); "
             f"dummy input {list(dummy.shape)}; exporter wrote {files}"]
    notes.append(check(path))
    return notes


def export_dynamo(model_cpu, in_shape, path, opset):
    notes = []
    dummy = torch.randn(4, *in_shape)  # batch > 1 so torch.export does not specialise it
    attempts = [
        ("dynamic_shapes", {"dynamic_shapes": ({0: torch.export.Dim("batch")},)}),
        ("dynamic_axes", {"dynamic_axes": {INPUT_NAME: {0: "batch"}, OUTPUT_NAME: {0: "batch"}}}),
        ("static", {}),
    ]
    for label, kw in attempts:
        tmpd = tempfile.mkdtemp(prefix="dynamo_export_")
        tmp = os.path.join(tmpd, "model.onnx")
        try:
            try:
                torch.onnx.export(model_cpu, (dummy,), tmp, dynamo=True, opset_version=opset,
                                  input_names=[INPUT_NAME], output_names=[OUTPUT_NAME],
                                  external_data=False, **kw)
            except TypeError as e:
                notes.append(f"{label}: external_data=False rejected ({e}); retrying without it")
                torch.onnx.export(model_cpu, (dummy,), tmp, dynamo=True, opset_version=opset,
                                  input_names=[INPUT_NAME], output_names=[OUTPUT_NAME], **kw)
            files = sorted(os.listdir(tmpd))
            m = save_self_contained(tmp, path)
            dim0 = m.graph.input[0].type.tensor_type.shape.dim[0]
            dyn = dim0.HasField("dim_param")
            notes.append(f"torch.onnx.export(dynamo=True, opset_version={opset}) with {label}: OK; "
                         f"dummy input {list(dummy.shape)}; exporter wrote {files}; "
                         f"re-saved self-contained; input dim0 = "
                         f"{dim0.dim_param if dyn else dim0.dim_value} "
                         f"({'dynamic' if dyn else 'STATIC'})")
            if label != "static" and not dyn:
                notes.append(f"{label}: batch dimension came out static; trying next option")
                continue
            notes.append(check(path))
            return notes
        except Exception as e:
            notes.append(f"dynamo export with {label} FAILED: {type(e).__name__}: "
                         f"{str(e).splitlines()[0] if str(e) else ''}")
            log(traceback.format_exc())
        finally:
            shutil.rmtree(tmpd, ignore_errors=True)
    raise RuntimeError("all dynamo export attempts failed: " + " | ".join(notes))


def ort_check(path, x_cpu, probs_ref):
    """Run the file in onnxruntime (CPU) on all test inputs; compare with torch CPU."""
    if ort is None:
        return ["onnxruntime not available: skipped"]
    try:
        return _ort_check(path, x_cpu, probs_ref)
    except Exception as e:
        log(traceback.format_exc())
        return [f"onnxruntime check FAILED: {type(e).__name__}: {str(e)[:300]}"]


def _ort_check(path, x_cpu, probs_ref):
    so = ort.SessionOptions()
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    out = []
    for bs in (1, 7):
        r = sess.run([OUTPUT_NAME], {INPUT_NAME: x_cpu[:bs].numpy()})[0]
        out.append(f"batch {bs}: output shape {list(r.shape)}")
    res = []
    for i in range(0, x_cpu.shape[0], 1000):
        res.append(sess.run([OUTPUT_NAME], {INPUT_NAME: x_cpu[i:i + 1000].numpy()})[0])
    p = np.concatenate(res)
    ref = probs_ref.numpy()
    agree = int((p.argmax(1) == ref.argmax(1)).sum())
    out.append(f"onnxruntime {ort.__version__} CPU, 10000 test images in batches of 1000: "
               f"max |p_ort - p_torch| = {float(np.abs(p - ref).max()):.3e}, "
               f"argmax agrees on {agree}/10000")
    return out


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------

DTYPE_NAMES = {v: k for k, v in onnx.TensorProto.DataType.items()}


def fmt_type(vi):
    tt = vi.type.tensor_type
    dims = []
    for d in tt.shape.dim:
        if d.HasField("dim_param"):
            dims.append(d.dim_param)
        elif d.HasField("dim_value"):
            dims.append(str(d.dim_value))
        else:
            dims.append("?")
    return f"{DTYPE_NAMES.get(tt.elem_type, tt.elem_type)} [{', '.join(dims)}]"


def fmt_attr(a):
    v = onnx.helper.get_attribute_value(a)
    if isinstance(v, onnx.TensorProto):
        arr = numpy_helper.to_array(v)
        s = f"tensor {DTYPE_NAMES.get(v.data_type, v.data_type)} {list(arr.shape)}"
        if arr.size <= 16:
            s += f" = {arr.tolist()}"
        return s
    if isinstance(v, bytes):
        return repr(v.decode("utf-8", "replace"))
    if isinstance(v, onnx.GraphProto):
        return f"<graph {v.name}>"
    if isinstance(v, list):
        return "[" + ", ".join(x.decode() if isinstance(x, bytes) else str(x) for x in v) + "]"
    return str(v)


def describe_onnx(rel, path, notes):
    data = open(path, "rb").read()
    m = onnx.load_from_string(data)
    g = m.graph
    L = [f"=== {rel} ===",
         f"size: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}",
         f"ir_version: {m.ir_version}",
         f"producer: {m.producer_name} {m.producer_version}",
         "opset_import: " + ", ".join(f"'{o.domain}':{o.version}" for o in m.opset_import),
         f"graph name: {g.name}"]
    for n in notes:
        L.append(f"note: {n}")
    for vi in g.input:
        L.append(f"graph input: {vi.name}: {fmt_type(vi)}")
    for vi in g.output:
        L.append(f"graph output: {vi.name}: {fmt_type(vi)}")
    counts = {}
    for node in g.node:
        key = node.op_type if not node.domain else f"{node.domain}::{node.op_type}"
        counts[key] = counts.get(key, 0) + 1
    L.append("op types: " + ", ".join(f"{k} x{v}" for k, v in counts.items()))
    L.append(f"nodes ({len(g.node)}):")
    for i, node in enumerate(g.node):
        dom = f" domain={node.domain}" if node.domain else ""
        L.append(f"  [{i}] {node.op_type}{dom} name={node.name!r}")
        L.append(f"       inputs={list(node.input)} outputs={list(node.output)}")
        for a in node.attribute:
            L.append(f"       attr {a.name} = {fmt_attr(a)}")
    L.append(f"initializers ({len(g.initializer)}):")
    for t in g.initializer:
        loc = " EXTERNAL" if t.data_location == onnx.TensorProto.EXTERNAL else ""
        vals = ""
        if not loc and int(np.prod(list(t.dims) or [1])) <= 16:
            vals = f" = {numpy_helper.to_array(t).tolist()}"
        L.append(f"  {t.name}: {DTYPE_NAMES.get(t.data_type, t.data_type)} {list(t.dims)}{loc}{vals}")
    if g.value_info:
        L.append(f"value_info ({len(g.value_info)}):")
        for vi in g.value_info:
            L.append(f"  {vi.name}: {fmt_type(vi)}")
    if m.functions:
        L.append(f"functions ({len(m.functions)}):")
        for f in m.functions:
            L.append(f"  {f.domain}::{f.name} ops={[n.op_type for n in f.node]}")
    if m.metadata_props:
        L.append("metadata_props: " + ", ".join(f"{p.key}={p.value}" for p in m.metadata_props))
    L.append("")
    return L, counts


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="directory with the Fashion-MNIST .gz files")
    ap.add_argument("--out", required=True, help="output directory")
    args = ap.parse_args()

    t_start = time.time()
    os.makedirs(args.out, exist_ok=True)
    stage = tempfile.mkdtemp(prefix="convscope_results_")
    models_dir = os.path.join(stage, "models")
    fixtures_dir = os.path.join(stage, "fixtures")
    os.makedirs(models_dir)
    os.makedirs(fixtures_dir)

    if not torch.cuda.is_available():
        log("ERROR: CUDA is not available; this script trains on the GPU.")
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True, warn_only=True)
    dev = torch.device("cuda")
    gpu_name = torch.cuda.get_device_name(0)
    log(f"python {sys.version.split()[0]}, torch {torch.__version__}, onnx {onnx.__version__}, "
        f"onnxruntime {ort.__version__ if ort else 'n/a'}, numpy {np.__version__}")
    try:
        import onnxscript
        log(f"onnxscript {onnxscript.__version__}")
    except Exception:
        pass
    log(f"GPU: {gpu_name}; CPU threads: {torch.get_num_threads()}")

    xtr, ytr, xte, yte = load_fashion_mnist(args.data)
    log(f"loaded: train {tuple(xtr.shape)}, test {tuple(xte.shape)}, "
        f"pixel range [{xtr.min().item()}, {xtr.max().item()}], "
        f"first test labels {yte[:10].tolist()}")
    xte_48_cpu = resize48(xte)

    xtr_g, ytr_g, xte_g, yte_g = xtr.to(dev), ytr.to(dev), xte.to(dev), yte.to(dev)
    xtr48_g, xte48_g = resize48(xtr_g), resize48(xte_g)

    specs = {
        "course-high": dict(
            seed=1, resize=True, schedules=[(15, 1e-3, 128), (30, 1e-3, 128)],
            description=("Tanh CNN (two 7x7 convolution + 2x2 max-pool blocks, two dense layers, "
                         "softmax) trained well on Fashion-MNIST upsampled bilinearly to 48x48.")),
        "course-low": dict(
            seed=2, resize=True,
            description=("The course-high architecture barely trained (plain SGD stopped early) "
                         "so that it is a deliberately weak Fashion-MNIST classifier.")),
        "lenet5": dict(
            seed=3, resize=False, schedules=[(30, 2e-3, 64), (50, 2e-3, 64)],
            description=("LeNet-5 style CNN (5x5 convolutions, ReLU, 2x2 average pooling, "
                         "three dense layers, softmax) trained well on 28x28 Fashion-MNIST.")),
    }

    trained = {}
    train_info = {}
    # ---- training -------------------------------------------------------
    for name in ("course-high", "course-low", "lenet5"):
        sp = specs[name]
        t0 = time.time()
        try:
            if name == "course-low":
                model, info = train_weak(name, make_course, sp["seed"], xtr48_g, ytr_g,
                                         xte48_g, yte_g)
            else:
                # Adam with a fixed schedule.  Only if the result misses the 0.89 target
                # is the model retrained from scratch (same seed) with the next, longer
                # schedule; the log says so.
                xa, xb = (xtr48_g, xte48_g) if sp["resize"] else (xtr_g, xte_g)
                for k, (epochs, lr, batch) in enumerate(sp["schedules"]):
                    torch.manual_seed(sp["seed"])
                    model = (make_course() if sp["resize"] else make_lenet5()).to(dev)
                    info = train_well(name, model, xa, ytr_g, xb, yte_g, epochs=epochs,
                                      lr=lr, batch=batch, seed=sp["seed"])
                    acc = gpu_accuracy(model, xb, yte_g)
                    if acc >= 0.892 or k == len(sp["schedules"]) - 1:
                        break
                    log(f"[{name}] test acc {acc:.4f} below target with schedule "
                        f"{(epochs, lr, batch)}; retraining with {sp['schedules'][k + 1]}")
            torch.cuda.synchronize()
            info["train_seconds"] = round(time.time() - t0, 1)
            trained[name] = model.cpu().eval()
            train_info[name] = info
            log(f"[{name}] trained in {info['train_seconds']}s")
        except Exception as e:
            ERRORS.append((f"train {name}", repr(e)))
            log(traceback.format_exc())

    # ---- CPU evaluation + shipped export + JSON --------------------------
    results = {}
    report = []
    op_summary = {}
    cpu_probs = {}
    for name, model in trained.items():
        sp = specs[name]
        in_shape = [1, COURSE_SIZE, COURSE_SIZE] if sp["resize"] else [1, 28, 28]
        x_in = xte_48_cpu if sp["resize"] else xte
        try:
            probs, pred, correct, margin = cpu_evaluate(model, xte, yte, sp["resize"])
            cpu_probs[name] = probs
            acc = correct / NUM_TEST
            log(f"[{name}] CPU float32 test accuracy {acc:.4f} ({correct}/{NUM_TEST}); "
                f"images with top-2 probability margin < 1e-4: {int((margin < 1e-4).sum())}, "
                f"< 1e-6: {int((margin < 1e-6).sum())}")
            onnx_path = os.path.join(models_dir, f"{name}.onnx")
            exporter = "torch.onnx.export (TorchScript, dynamo=False)"
            try:
                notes = export_torchscript(copy.deepcopy(model), in_shape, onnx_path, 17)
            except Exception as e:
                # Fallback so that a model still ships; recorded as an error.
                ERRORS.append((f"torchscript export {name}", repr(e)))
                log(traceback.format_exc())
                notes = [f"TorchScript export FAILED ({e!r}); fell back to dynamo exporter"]
                notes += export_dynamo(copy.deepcopy(model), in_shape, onnx_path, 17)
                exporter = "torch.onnx.export (dynamo=True)"
            notes += ort_check(onnx_path, x_in, probs)
            rep, counts = describe_onnx(f"models/{name}.onnx", onnx_path, notes)
            report += rep
            op_summary[f"models/{name}.onnx"] = counts
            meta = {
                "name": name,
                "description": sp["description"],
                "input_shape": in_shape,
                "resize": "bilinear-half-pixel" if sp["resize"] else "none",
                # How ConvScope brings a picture to this model (docs/own-model.md): the data
                # set's garments are light on black, so a photo on a light background is inverted.
                "preprocessing": FASHION_PREPROCESSING,
                "test_accuracy": acc,
                "test_correct": correct,
                "test_count": NUM_TEST,
                "predictions": "".join(str(int(c)) for c in pred.tolist()),
                "sample_probabilities": [[float(v) for v in row]
                                         for row in probs[:NUM_SAMPLE_PROBS].tolist()],
                "exporter": exporter,
                "opset": 17,
                "torch_version": torch.__version__,
            }
            info = train_info[name]
            if "epochs" in info:
                meta["epochs"] = info["epochs"]
            else:
                meta["steps"] = info["steps"]
            meta["seed"] = sp["seed"]
            meta["trained_on"] = gpu_name
            meta["optimizer"] = info["optimizer"]
            meta["learning_rate"] = info["learning_rate"]
            meta["batch_size"] = info["batch_size"]
            with open(os.path.join(models_dir, f"{name}.json"), "w") as fh:
                json.dump(meta, fh, indent=2)
                fh.write("\n")
            results[name] = (acc, correct)
        except Exception as e:
            ERRORS.append((f"export/eval {name}", repr(e)))
            log(traceback.format_exc())

    # ---- fixtures -------------------------------------------------------
    fixtures = [
        ("course-high", "course-high-dynamo-op18.onnx", "dynamo", 18),
        ("lenet5", "lenet5-dynamo-op18.onnx", "dynamo", 18),
        ("lenet5", "lenet5-torchscript-op13.onnx", "torchscript", 13),
    ]
    for name, fname, kind, opset in fixtures:
        if name not in trained or name not in cpu_probs:
            ERRORS.append((f"fixture {fname}", "model missing"))
            continue
        sp = specs[name]
        in_shape = [1, COURSE_SIZE, COURSE_SIZE] if sp["resize"] else [1, 28, 28]
        x_in = xte_48_cpu if sp["resize"] else xte
        path = os.path.join(fixtures_dir, fname)
        t0 = time.time()
        try:
            model = copy.deepcopy(trained[name]).eval()
            if kind == "dynamo":
                notes = export_dynamo(model, in_shape, path, opset)
            else:
                notes = export_torchscript(model, in_shape, path, opset)
            notes += ort_check(path, x_in, cpu_probs[name])
            rep, counts = describe_onnx(f"fixtures/{fname}", path, notes)
            report += rep
            op_summary[f"fixtures/{fname}"] = counts
            log(f"[{fname}] exported in {time.time() - t0:.1f}s")
        except Exception as e:
            ERRORS.append((f"fixture {fname}", repr(e)))
            log(traceback.format_exc())

    # ---- write report + tar ---------------------------------------------
    header = [f"ConvScope export report", f"torch {torch.__version__}, onnx {onnx.__version__}, "
              f"onnxruntime {ort.__version__ if ort else 'n/a'}, GPU {gpu_name}", ""]
    header.append("op-type summary:")
    for k, v in op_summary.items():
        header.append(f"  {k}: " + ", ".join(f"{op} x{c}" for op, c in v.items()))
    header.append("")
    if ERRORS:
        header.append("ERRORS:")
        header += [f"  {s}: {m}" for s, m in ERRORS]
        header.append("")
    with open(os.path.join(args.out, "export_report.txt"), "w") as fh:
        fh.write("\n".join(header + report) + "\n")
    with tarfile.open(os.path.join(args.out, "results.tar"), "w") as tf:
        tf.add(models_dir, arcname="models")
        tf.add(fixtures_dir, arcname="fixtures")

    # ---- summary ----------------------------------------------------------
    log("")
    log("===== summary =====")
    for name, (acc, correct) in results.items():
        info = train_info[name]
        extent = f"{info['epochs']} epochs" if "epochs" in info else f"{info['steps']} steps"
        log(f"{name:12s} test accuracy (CPU fp32) {acc:.4f} ({correct}/10000), {extent}")
    for d in (models_dir, fixtures_dir):
        for f in sorted(os.listdir(d)):
            log(f"  {os.path.basename(d)}/{f}: {os.path.getsize(os.path.join(d, f))} bytes")
    for k, v in op_summary.items():
        log(f"  ops {k}: " + ", ".join(f"{op} x{c}" for op, c in v.items()))
    log(f"total time {time.time() - t_start:.1f}s")
    if ERRORS:
        log("ERRORS:")
        for s, m in ERRORS:
            log(f"  {s}: {m}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
