#!/usr/bin/env python3
"""Median time of one ONNX Runtime inference on the CPU (CPUExecutionProvider).

  python3 scripts/onnxruntime_cpu_time.py --model data/models/efficientnet-lite0.onnx --batch 1
  python3 scripts/onnxruntime_cpu_time.py --model data/models/efficientnet-lite0.onnx --batch 64

Needs numpy, Pillow and onnxruntime (pip install onnxruntime, e.g. in the venv that
scripts/export_efficientnet_lite0.py describes; torch, where present, does the resize). The input is a batch of --batch copies of one
picture: --image FILE, or else the card's first photo where python3-skimage provides it,
preprocessed by the card's centre-crop rule (the card is the model's path with .json, or --card);
without a card or picture, a fixed pseudo-random input (a dense CNN's time does not depend on the
values). --warmup runs (default 20) are not timed, then --runs (default 50) are, each one
session.run of the whole batch; the median is printed in ms.
--threads sets intra_op_num_threads (default 0: ONNX Runtime's choice, one per physical core).
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np


def centre_crop_input(path, card):
    """The card's preprocessing (ConvScope's rule) in float32 with numpy: 3 x H x W."""
    from PIL import Image

    pre = card["preprocessing"]
    _, height, width = card["input_shape"]
    rgb = np.asarray(Image.open(path).convert("RGB"), dtype=np.uint8)
    x = rgb.astype(np.float32).transpose(2, 0, 1) / np.float32(255)
    h, w = x.shape[1:]
    s = round(min(height, width) / pre["crop_fraction"])
    rh, rw = (s, math.floor(s * w / h)) if h <= w else (math.floor(s * h / w), s)
    rh, rw = max(rh, height), max(rw, width)
    try:  # exactly the export script's reference when torch is there
        import torch

        y = torch.nn.functional.interpolate(torch.from_numpy(x)[None], size=(rh, rw), mode="bilinear",
                                            align_corners=False, antialias=False)[0].numpy()
    except ImportError:
        y = bilinear_half_pixel(x, rh, rw)
    top, left = round((rh - height) / 2), round((rw - width) / 2)
    y = y[:, top:top + height, left:left + width]
    mean = np.asarray(pre["mean"], np.float32)[:, None, None]
    std = np.asarray(pre["std"], np.float32)[:, None, None]
    return ((y * np.float32(pre["value_range"]) - mean) / std).astype(np.float32)


def bilinear_half_pixel(x, rh, rw):
    """Bilinear resize, half-pixel centres, no antialias: PyTorch's align_corners=False to about 1e-5
    (the coordinates are computed in float64 here); good enough for timing, not for references."""

    def axis(n_in, n_out):
        src = np.maximum((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0)
        i0 = np.minimum(np.floor(src).astype(int), n_in - 1)
        i1 = np.minimum(i0 + 1, n_in - 1)
        return i0, i1, (src - i0).astype(np.float32)

    r0, r1, fr = axis(x.shape[1], rh)
    c0, c1, fc = axis(x.shape[2], rw)
    rows = x[:, r0, :] * (1 - fr)[None, :, None] + x[:, r1, :] * fr[None, :, None]
    return rows[:, :, c0] * (1 - fc) + rows[:, :, c1] * fc


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--threads", type=int, default=0, help="intra_op_num_threads (0: ONNX Runtime's default)")
    parser.add_argument("--image", help="picture to preprocess (default: the card's first photo)")
    parser.add_argument("--card", help="model card (default: the model's path with .json)")
    args = parser.parse_args()
    if args.batch < 1 or args.runs < 1 or args.warmup < 0:
        sys.exit("--batch and --runs must be at least 1, --warmup at least 0")

    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    session = ort.InferenceSession(args.model, sess_options=options, providers=["CPUExecutionProvider"])
    model_input = session.get_inputs()[0]
    shape = [d if isinstance(d, int) else 1 for d in model_input.shape[1:]]

    card_path = args.card or os.path.splitext(args.model)[0] + ".json"
    card = json.load(open(card_path)) if os.path.isfile(card_path) else None
    image = args.image
    if image is None and card and card.get("photos"):
        candidate = os.path.join("/usr/lib/python3/dist-packages/skimage/data", card["photos"][0]["file"])
        image = candidate if os.path.isfile(candidate) else None
    if image and card and card.get("preprocessing", {}).get("resize") == "centre-crop":
        one = centre_crop_input(image, card)
        source = os.path.basename(image) + " preprocessed by the card's rule"
    else:
        one = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        source = "pseudo-random"
    batch = np.ascontiguousarray(np.broadcast_to(one, (args.batch, *one.shape)))
    feed = {model_input.name: batch}

    for _ in range(args.warmup):
        session.run(None, feed)
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        session.run(None, feed)
        times.append((time.perf_counter() - start) * 1000.0)
    threads = args.threads if args.threads else f"default ({os.cpu_count()} logical CPUs here)"
    print(f"model {args.model}, input {source}, batch {args.batch}, onnxruntime {ort.__version__} "
          f"CPUExecutionProvider, intra_op_num_threads {threads}, {args.warmup} warm-up + {args.runs} timed runs")
    print(f"median {statistics.median(times):.2f} ms (min {min(times):.2f}, max {max(times):.2f}) "
          f"= {statistics.median(times) / args.batch:.3f} ms per image")


if __name__ == "__main__":
    main()
