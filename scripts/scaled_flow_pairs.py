#!/usr/bin/env python3
"""Optical-flow test pairs with larger motion: a Middlebury pair (frame10.png, frame11.png,
flow10.flo) resized by a whole factor k, its ground truth resampled onto the new grid and
multiplied by k, so every motion is k times longer in pixels. Nothing here is committed data:
the pairs are written to OUT_DIR from the pair folders given.

    python3 scripts/scaled_flow_pairs.py OUT_DIR ../shared/data/middlebury/RubberWhale --factors 2 3
    beliefscope run flow --frame1 OUT_DIR/RubberWhale_x2/frame10.png \\
        --frame2 OUT_DIR/RubberWhale_x2/frame11.png --gt OUT_DIR/RubberWhale_x2/flow10.flo

Frames are resized with bicubic interpolation (cv2.INTER_CUBIC) and rounded to 8 bits. The
flow at a new pixel centre (X + 0.5) / k - 0.5 of the old grid is the bilinear mix of its four
neighbours, times k; where any of the four is unknown (a component above 1e9) the new pixel is
unknown too. Needs numpy and opencv-python-headless (scripts/opencv_flow_peer.py makes a
virtual environment with both).
"""

import argparse
import sys
from pathlib import Path

import numpy as np

try:
    import cv2
except ImportError:  # pragma: no cover - a message instead of a trace
    sys.exit("needs opencv-python-headless and numpy (pip install opencv-python-headless numpy)")

UNKNOWN = 1e9
TAG = 202021.25


def read_flo(path):
    with open(path, "rb") as f:
        tag = np.fromfile(f, np.float32, 1)[0]
        if tag != TAG:
            raise SystemExit(f"{path}: not a .flo file (tag {tag})")
        w, h = np.fromfile(f, np.int32, 2)
        data = np.fromfile(f, np.float32, 2 * w * h)
    return data.reshape(h, w, 2).astype(np.float64)


def write_flo(path, flow):
    h, w, _ = flow.shape
    with open(path, "wb") as f:
        np.array([TAG], np.float32).tofile(f)
        np.array([w, h], np.int32).tofile(f)
        flow.astype(np.float32).tofile(f)


def scale_flow(flow, k):
    h, w, _ = flow.shape
    known = (np.abs(flow) < UNKNOWN).all(axis=2)
    ys = (np.arange(h * k) + 0.5) / k - 0.5
    xs = (np.arange(w * k) + 0.5) / k - 0.5
    y0 = np.clip(np.floor(ys).astype(int), 0, h - 1)
    x0 = np.clip(np.floor(xs).astype(int), 0, w - 1)
    y1 = np.clip(y0 + 1, 0, h - 1)
    x1 = np.clip(x0 + 1, 0, w - 1)
    fy = np.clip(ys - y0, 0.0, 1.0)[:, None, None]
    fx = np.clip(xs - x0, 0.0, 1.0)[None, :, None]
    safe = np.where(known[..., None], flow, 0.0)
    a = safe[y0][:, x0]
    b = safe[y0][:, x1]
    c = safe[y1][:, x0]
    d = safe[y1][:, x1]
    out = ((1 - fy) * ((1 - fx) * a + fx * b) + fy * ((1 - fx) * c + fx * d)) * k
    ok = known[y0][:, x0] & known[y0][:, x1] & known[y1][:, x0] & known[y1][:, x1]
    out[~ok] = 1e10
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("pairs", type=Path, nargs="+", help="folders with frame10/11 + flow10.flo")
    parser.add_argument("--factors", type=int, nargs="+", default=[2, 3])
    args = parser.parse_args()
    for pair in args.pairs:
        flow = read_flo(pair / "flow10.flo")
        frames = [cv2.imread(str(pair / f), cv2.IMREAD_UNCHANGED) for f in ("frame10.png", "frame11.png")]
        for k in args.factors:
            out = args.out_dir / f"{pair.name}_x{k}"
            out.mkdir(parents=True, exist_ok=True)
            for name, frame in zip(("frame10.png", "frame11.png"), frames):
                h, w = frame.shape[:2]
                big = cv2.resize(frame, (w * k, h * k), interpolation=cv2.INTER_CUBIC)
                cv2.imwrite(str(out / name), big)
            scaled = scale_flow(flow, k)
            write_flo(out / "flow10.flo", scaled)
            known = (np.abs(scaled) < UNKNOWN).all(axis=2)
            longest = np.hypot(scaled[..., 0], scaled[..., 1])[known].max()
            print(f"{out}: {scaled.shape[1]} x {scaled.shape[0]}, largest motion {longest:.1f} px")


if __name__ == "__main__":
    main()
