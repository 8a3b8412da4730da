#!/usr/bin/python3
"""Makes the small picture files of tests/core/test_colour_pictures.cpp (Debian's python3-pil and
python3-numpy): colour PNGs in 8 and 16 bits, one with alpha, a gray PNG and a CMYK JPEG. Each
picture is 4 x 3 pixels of known colours (see COLOURS), so the test can name every value."""
import struct
import zlib

import numpy as np
from PIL import Image

# Row-major 3 x 4, R, G, B in 0..255.
COLOURS = np.array([
    [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]],
    [[0, 0, 0], [10, 20, 30], [200, 100, 50], [128, 128, 128]],
    [[1, 2, 3], [250, 251, 252], [60, 0, 200], [0, 90, 255]],
], dtype=np.uint8)


def png16(path, rgb16):
    """A 16-bit RGB PNG written by hand: Pillow writes 16 bits for gray pictures only."""
    height, width, _ = rgb16.shape
    raw = b"".join(b"\0" + rgb16[y].astype(">u2").tobytes() for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 16, 2, 0, 0, 0)
    with open(path, "wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


Image.fromarray(COLOURS, "RGB").save("rgb.png")
# 257 x + 1 below 255 (65535 at 255): not a plain widened 8-bit picture
png16("rgb16.png", COLOURS.astype(np.uint16) * 257 + (COLOURS < 255))
alpha = np.full((3, 4, 1), 255, dtype=np.uint8)
alpha[0, 0] = 0  # a transparent red pixel is still red once the alpha is dropped
Image.fromarray(np.concatenate([COLOURS, alpha], axis=2), "RGBA").save("rgba.png")
Image.fromarray(COLOURS[:, :, 1], "L").save("gray.png")
# 16 x 16 blocks of pure red and pure blue: JPEG keeps flat colours nearly exact.
block = np.zeros((16, 32, 3), dtype=np.uint8)
block[:, :16] = [255, 0, 0]
block[:, 16:] = [0, 0, 255]
Image.fromarray(block, "RGB").convert("CMYK").save("cmyk.jpg", quality=95)
