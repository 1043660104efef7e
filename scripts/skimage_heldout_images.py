#!/usr/bin/env python3
"""Held-out denoising test images: 256 x 256 gray crops of the photographs that ship inside the
scikit-image wheel (skimage/data), for measuring the denoise defaults on images used for no
choice in this repository (README, "The schedule"). Nothing here is committed data: the images
are written to OUT_DIR from the installed package.

    pip install scikit-image
    python3 scripts/skimage_heldout_images.py OUT_DIR
    for f in OUT_DIR/*.png; do beliefscope run denoise --image $f --out runs/$(basename $f .png); done

Each image is converted to gray (ITU-R 601 luma, skimage.color.rgb2gray), resized with
anti-aliasing so that its shorter side is 256 pixels, centre-cropped to 256 x 256 and rounded to
8 bits.
"""
import os
import sys

import numpy as np
import skimage
from skimage import color, io, transform

NAMES = ["astronaut.png", "brick.png", "chelsea.png", "coffee.png", "coins.png", "moon.png",
         "motorcycle_left.png", "phantom.png", "rocket.jpg"]


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    data = os.path.join(os.path.dirname(skimage.__file__), "data")
    for name in NAMES:
        im = io.imread(os.path.join(data, name))
        im = color.rgb2gray(im[..., :3]) if im.ndim == 3 else im / (255.0 if im.max() > 1 else 1.0)
        h, w = im.shape
        s = 256 / min(h, w)
        im = transform.resize(im, (round(h * s), round(w * s)), anti_aliasing=True)
        h, w = im.shape
        y, x = (h - 256) // 2, (w - 256) // 2
        out = np.clip(np.round(im[y:y + 256, x:x + 256] * 255), 0, 255).astype(np.uint8)
        io.imsave(os.path.join(out_dir, name.split(".")[0] + ".png"), out)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "heldout")
