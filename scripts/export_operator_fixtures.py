#!/usr/bin/env python3
"""Exports the small CNNs of tests/data/exported/operators/ with both PyTorch exporters.

Each model holds the layers students' CNNs contain beyond the course's (issue 12): BatchNorm that
does not follow a Conv, LeakyReLU, ELU, GELU (exact and tanh), Dropout, residual sums, grouped,
depthwise and dilated Conv, strided Conv, MaxPool with ceil_mode, AdaptiveAvgPool (to
GlobalAveragePool or ReduceMean), torch.mean, torch.cat, nn.Upsample and F.interpolate (nearest and
bilinear, with and without align_corners), and a small Fashion-MNIST classifier with them
(student-cnn, trained for one epoch on the training set). Every model is exported by the TorchScript exporter
(dynamo=False, opsets 13 and 17) and the dynamo exporter (dynamo=True, opsets 18 and 20), with a
free batch dimension, into a folder laid out like an ONNX node test case:

  tests/data/exported/operators/<model>-<exporter>-op<N>/model.onnx
                                                   .../test_data_set_0/input_0.pb, output_0.pb

input_0 is a fixed random batch (odd map sizes, negative values), output_0 PyTorch's eager output
for it. Before a folder is written, ONNX Runtime runs the exported file and must agree with
PyTorch (max |difference| <= 1e-5); the script stops otherwise. The tests (test_exported_models)
need neither torch nor ONNX Runtime.

Usage (torch, onnx, onnxscript and onnxruntime from PyPI, in a venv that git ignores):
  python3 -m venv .venv-fixtures && .venv-fixtures/bin/pip install torch onnx onnxscript onnxruntime
  .venv-fixtures/bin/python scripts/export_operator_fixtures.py [MODEL ...]
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "exported", "operators")
EXPORTS = [("torchscript", 13), ("torchscript", 17), ("dynamo", 18), ("dynamo", 20)]


class NormsAndActivations(nn.Module):
    """BatchNorm after an activation and after a Linear (never folded), LeakyReLU, ELU, both GELUs,
    a residual sum, Dropout, a strided Conv, MaxPool with ceil_mode, AdaptiveAvgPool2d(1)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)  # follows a Conv: the exporter may fold it
        self.conv3 = nn.Conv2d(8, 12, 3, stride=2)
        self.drop = nn.Dropout(0.3)
        self.fc1 = nn.Linear(12, 16)
        self.bn3 = nn.BatchNorm1d(16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        y = self.bn1(F.leaky_relu(self.conv1(x), 0.1))
        y = y + F.elu(self.bn2(self.conv2(y)), alpha=0.7)
        y = F.max_pool2d(F.gelu(self.conv3(y)), 2, ceil_mode=True)
        y = F.gelu(self.drop(y), approximate="tanh")
        y = torch.flatten(F.adaptive_avg_pool2d(y, 1), 1)
        return self.fc2(F.gelu(self.bn3(self.fc1(y))))


class GroupedAndDilated(nn.Module):
    """Grouped Conv, depthwise Conv (multiplier 1 and 2), dilated Conv, torch.mean over the map."""

    def __init__(self):
        super().__init__()
        self.grouped = nn.Conv2d(4, 8, 3, padding=1, groups=2)
        self.depthwise = nn.Conv2d(8, 8, 3, padding=1, stride=2, groups=8, bias=False)
        self.dilated = nn.Conv2d(8, 6, 3, padding=2, dilation=2)
        self.multiplier = nn.Conv2d(6, 12, (3, 2), dilation=(1, 3), groups=6)
        self.fc = nn.Linear(12, 10)

    def forward(self, x):
        y = F.relu(self.grouped(x))
        y = F.relu(self.depthwise(y))
        y = F.leaky_relu(self.dilated(y))
        y = torch.tanh(self.multiplier(y))
        return self.fc(torch.mean(y, dim=(2, 3)))


class ConcatBranches(nn.Module):
    """Two branches joined by torch.cat (an Inception-style block), then AdaptiveAvgPool2d."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 4, 1)
        self.b = nn.Conv2d(3, 6, 3, padding=1)
        self.c = nn.Conv2d(3, 2, 3, padding=2, dilation=2)
        self.merge = nn.Conv2d(12, 8, 3)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        y = torch.cat([F.relu(self.a(x)), torch.sigmoid(self.b(x)), F.elu(self.c(x))], dim=1)
        y = self.pool(F.relu(self.merge(y)))
        return F.softmax(self.fc(torch.flatten(y, 1)), dim=1)


class Upsampling(nn.Module):
    """nn.Upsample and F.interpolate: nearest x2, bilinear x2 (align_corners False and True), and a
    bilinear resize to a fixed size."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, stride=2)
        self.up_nearest = nn.Upsample(scale_factor=2, mode="nearest")
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.up_bilinear = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.conv3 = nn.Conv2d(4, 3, 3)
        self.fc = nn.Linear(3 * 9 * 9, 10)

    def forward(self, x):
        y = self.up_nearest(F.relu(self.conv1(x)))
        y = self.up_bilinear(torch.tanh(self.conv2(y)))
        y = F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=True)
        y = F.interpolate(self.conv3(y), size=(9, 9), mode="bilinear", align_corners=False)
        return self.fc(torch.flatten(y, 1))


class StudentCnn(nn.Module):
    """A Fashion-MNIST classifier as a student would write it after the course: Conv, BatchNorm after
    the activation, LeakyReLU, a depthwise-separable block, a dilated Conv, two branches
    concatenated, an Upsample back, GELU, Dropout, AdaptiveAvgPool2d. Trained briefly (one epoch on
    the training set), so that its feature maps and predictions mean something in the window."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.depthwise = nn.Conv2d(16, 16, 3, padding=1, stride=2, groups=16)
        self.pointwise = nn.Conv2d(16, 24, 1)
        self.dilated = nn.Conv2d(24, 8, 3, padding=2, dilation=2)
        self.narrow = nn.Conv2d(24, 8, 3, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.mix = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        y = self.bn1(F.leaky_relu(self.stem(x), 0.1))
        y = F.relu(self.pointwise(F.relu(self.depthwise(y))))
        y = torch.cat([F.elu(self.dilated(y)), F.gelu(self.narrow(y))], dim=1)
        y = F.max_pool2d(self.up(y), 2, ceil_mode=True)
        y = F.gelu(self.mix(self.drop(y)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))


FASHION = os.environ.get("CONVSCOPE_DATA", "/usr/share/datasets/fashion-mnist")


def read_idx(name):
    import gzip
    with gzip.open(os.path.join(FASHION, name), "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def train_student(model):
    # Pixels scaled to [0, 1], as ConvScope feeds the data set to a 1x28x28 model.
    images = torch.from_numpy(read_idx("train-images-idx3-ubyte.gz").astype(np.float32) / 255.0).unsqueeze(1)
    labels = torch.from_numpy(read_idx("train-labels-idx1-ubyte.gz").astype(np.int64))
    optimiser = torch.optim.Adam(model.parameters(), lr=2e-3)
    model.train()
    order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(12))
    for start in range(0, len(labels), 128):
        batch = order[start:start + 128]
        optimiser.zero_grad()
        F.cross_entropy(model(images[batch]), labels[batch]).backward()
        optimiser.step()
    return model.eval()


MODELS = {
    "norms-activations": (NormsAndActivations, (3, 15, 15)),
    "grouped-dilated": (GroupedAndDilated, (4, 13, 13)),
    "concat-branches": (ConcatBranches, (3, 11, 11)),
    "upsampling": (Upsampling, (3, 15, 15)),
    "student-cnn": (StudentCnn, (1, 28, 28)),
}


def make_model(cls):
    torch.manual_seed(12)
    model = cls()
    # Trained-looking statistics, so that the normalisations do something measurable.
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            with torch.no_grad():
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.3, 0.3)
    return model.eval()


def export(model, shape, path, exporter, opset):
    dummy = torch.randn(4, *shape)  # batch > 1 so that torch.export does not specialise it
    with tempfile.TemporaryDirectory() as tmpd:
        tmp = os.path.join(tmpd, "model.onnx")
        if exporter == "torchscript":
            torch.onnx.export(model, (dummy,), tmp, dynamo=False, opset_version=opset, input_names=["input"],
                              output_names=["output"], dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                              do_constant_folding=True)
        else:
            torch.onnx.export(model, (dummy,), tmp, dynamo=True, opset_version=opset, input_names=["input"],
                              output_names=["output"], dynamic_shapes=({0: torch.export.Dim("batch")},),
                              external_data=False)
        proto = onnx.load(tmp)  # with any external data folded in
    onnx.save(proto, path)
    return proto


def main():
    # Arguments: the models to export again (default: all of them).
    chosen = sys.argv[1:] or list(MODELS)
    unknown = [name for name in chosen if name not in MODELS]
    if unknown:
        sys.exit(f"unknown models {unknown}; known: {list(MODELS)}")
    rng = np.random.default_rng(12)
    for name, (cls, shape) in MODELS.items():
        if name not in chosen:
            rng.normal(0.0, 1.0, size=(3, *shape))  # the same draws as a full run, for the next models
            continue
        for exporter, opset in EXPORTS:
            shutil.rmtree(os.path.join(OUT, f"{name}-{exporter}-op{opset}"), ignore_errors=True)
        model = make_model(cls)
        if cls is StudentCnn:
            # The first 16 test images, as ConvScope reads them.
            model = train_student(model)
            x = (read_idx("t10k-images-idx3-ubyte.gz")[:16].astype(np.float32) / 255.0)[:, None]
            labels = read_idx("t10k-labels-idx1-ubyte.gz")[:16]
        else:
            # Odd maps, negative values and a few outliers.
            x = rng.normal(0.0, 1.0, size=(3, *shape)).astype(np.float32)
            x.flat[::37] *= 4.0
        with torch.no_grad():
            expected = model(torch.from_numpy(x)).numpy()
        if cls is StudentCnn:
            print(f"student-cnn: {np.mean(expected.argmax(1) == labels):.3f} of the first 16 test images right")
        for exporter, opset in EXPORTS:
            folder = os.path.join(OUT, f"{name}-{exporter}-op{opset}")
            os.makedirs(os.path.join(folder, "test_data_set_0"))
            proto = export(model, shape, os.path.join(folder, "model.onnx"), exporter, opset)
            session = onnxruntime.InferenceSession(os.path.join(folder, "model.onnx"))
            got = session.run(None, {session.get_inputs()[0].name: x})[0]
            error = float(np.max(np.abs(got - expected)))
            ops = sorted({n.op_type for n in proto.graph.node})
            print(f"{name}-{exporter}-op{opset}: ONNX Runtime vs PyTorch max |diff| {error:.2e}; ops {ops}")
            if error > 1e-5:
                sys.exit(f"ONNX Runtime disagrees with PyTorch on {folder}")
            data = os.path.join(folder, "test_data_set_0")
            onnx.save_tensor(numpy_helper.from_array(x, "input"), os.path.join(data, "input_0.pb"))
            onnx.save_tensor(numpy_helper.from_array(expected, "output"), os.path.join(data, "output_0.pb"))


if __name__ == "__main__":
    main()
