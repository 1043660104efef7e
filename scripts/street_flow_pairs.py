#!/usr/bin/env python3
"""Street-like optical-flow test pairs with exact ground truth: large motion (up to about
22 px), large textureless areas and occlusions, the character of outdoor driving scenes that
the Middlebury pairs lack. Nothing here is committed data: the pairs are written to OUT_DIR.

    python3 scripts/street_flow_pairs.py OUT_DIR --seeds 0 1 2      # OUT_DIR/street_s0 ...
    beliefscope run flow --frame1 OUT_DIR/street_s0/frame10.png \\
        --frame2 OUT_DIR/street_s0/frame11.png --gt OUT_DIR/street_s0/flow10.flo

A scene, drawn from the seed, is the sky, a ground plane and two objects in front of them:

* the sky, the top 30-40 % (a smooth vertical shading, no texture), far away: it moves by the
  camera's pan `t` alone (up to 6 px per axis);
* the ground below it: a street textured by a natural image (cameraman or house from the
  shared data, enlarged 2-3x) and a textureless wall (flat gray with a faint shading) over
  20-30 % of the width. The camera zooms by 3-5 % about a point near the centre and pans: the
  ground moves by `p' = c + s (p - c) + t`, up to about 22 px at the frame's corners, and
  covers or uncovers the sky at the horizon;
* a textured object (the other natural image) over 18-26 % of each side, moving rigidly by
  10-20 px, and a textureless one (a flat panel, 40+ gray levels off its surroundings),
  moving by 12-22 px: both occlude the background and uncover it.

Frame 1 shows at `p` the topmost layer holding `p`; frame 2 at `q` the topmost layer whose
moved shape holds `q`, sampled where that layer's point came from (the ground's inverse
map, the sky's or an object's `q - t`), bilinearly from the texture. The ground truth at `p` is the motion
of frame 1's topmost layer at `p` (defined where it is occluded in frame 2 too, as
Middlebury's). Both frames get Gaussian noise of 1 gray level and are rounded to 8 bits.
Needs numpy and opencv-python-headless (scripts/opencv_flow_peer.py makes a virtual
environment with both).
"""

import argparse
import sys
from pathlib import Path

import numpy as np

try:
    import cv2
except ImportError:  # pragma: no cover - a message instead of a trace
    sys.exit("needs opencv-python-headless and numpy (pip install opencv-python-headless numpy)")

HERE = Path(__file__).resolve().parent
IMAGES = HERE.parent.parent / "shared" / "data" / "images"
sys.path.insert(0, str(HERE))
from scaled_flow_pairs import write_flo  # noqa: E402  (the one .flo writer)


def texture(name, zoom, rng):
    """A natural image enlarged `zoom` times and tiled by mirroring: a function of (x, y)."""
    img = cv2.imread(str(IMAGES / name), cv2.IMREAD_GRAYSCALE)
    if img is None:
        raise SystemExit(f"cannot read {IMAGES / name}")
    img = cv2.resize(img, None, fx=zoom, fy=zoom, interpolation=cv2.INTER_CUBIC).astype(np.float32)
    off = rng.uniform(0, img.shape[1]), rng.uniform(0, img.shape[0])

    def sample(x, y):
        mx = (x + off[0]).astype(np.float32)
        my = (y + off[1]).astype(np.float32)
        return cv2.remap(img, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT_101)

    return sample


def scene(seed, w, h):
    rng = np.random.default_rng(seed)
    names = ["cameraman.png", "house.png"]
    rng.shuffle(names)
    street = texture(names[0], rng.uniform(2.0, 3.0), rng)
    obj_tex = texture(names[1], rng.uniform(1.5, 2.5), rng)
    sky = h * rng.uniform(0.30, 0.40)
    wall_w = w * rng.uniform(0.20, 0.30)
    wall_x0 = rng.uniform(0.0, w - wall_w)
    wall_gray = rng.uniform(60, 100)

    def background(x, y):
        v = street(x, y)
        return np.where((x >= wall_x0) & (x < wall_x0 + wall_w), wall_gray + 0.02 * (x - wall_x0), v)

    def sky_fill(x, y):
        return 190.0 + 30.0 * y / sky

    s = 1.0 + rng.uniform(0.03, 0.05)
    c = np.array([w * rng.uniform(0.4, 0.6), h * rng.uniform(0.4, 0.6)])
    t = rng.uniform(-6, 6, 2)
    objects = []
    for kind, (lo, hi) in (("textured", (10, 20)), ("flat", (12, 22))):
        ow, oh = w * rng.uniform(0.18, 0.26), h * rng.uniform(0.18, 0.26)
        x0, y0 = rng.uniform(0.05 * w, 0.95 * w - ow), rng.uniform(sky * 0.8, 0.95 * h - oh)
        ang = rng.uniform(0, 2 * np.pi)
        mag = rng.uniform(lo, hi)
        motion = np.array([mag * np.cos(ang), mag * np.sin(ang)])
        if kind == "flat":
            base = rng.uniform(20, 60) if rng.uniform() < 0.5 else rng.uniform(200, 235)

            def fill(x, y, base=base, x0=x0, y0=y0):
                return base + 0.03 * (x - x0) + 0.02 * (y - y0)
        else:
            fill = obj_tex
        objects.append(((x0, y0, x0 + ow, y0 + oh), motion, fill))
    return (background, sky, sky_fill), (s, c, t), objects


def render(seed, w, h, noise):
    (background, sky, sky_fill), (s, c, t), objects = scene(seed, w, h)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    # Frame 1 and the ground truth: sky and ground, then the objects in order (later on top).
    in_sky = ys < sky
    f1 = np.where(in_sky, sky_fill(xs, ys), background(xs, ys))
    flow = np.stack([(s - 1) * (xs - c[0]) + t[0], (s - 1) * (ys - c[1]) + t[1]], axis=2)
    flow[in_sky] = t
    for (x0, y0, x1, y1), m, fill in objects:
        inside = (xs >= x0) & (xs < x1) & (ys >= y0) & (ys < y1)
        f1 = np.where(inside, fill(xs, ys), f1)
        flow[inside] = m
    # Frame 2: the background where it came from (inverse of the camera map), then the objects
    # moved.
    bx = c[0] + (xs - t[0] - c[0]) / s
    by = c[1] + (ys - t[1] - c[1]) / s
    f2 = np.where(by < sky, sky_fill(xs - t[0], ys - t[1]), background(bx, by))
    for (x0, y0, x1, y1), m, fill in objects:
        sx, sy = xs - m[0], ys - m[1]
        inside = (sx >= x0) & (sx < x1) & (sy >= y0) & (sy < y1)
        f2 = np.where(inside, fill(sx, sy), f2)
    rng = np.random.default_rng(seed + 1000)
    frames = [np.clip(np.rint(f + rng.normal(0, noise, f.shape)), 0, 255).astype(np.uint8) for f in (f1, f2)]
    return frames, flow


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=480)
    parser.add_argument("--noise", type=float, default=1.0, help="gray levels")
    args = parser.parse_args()
    for seed in args.seeds:
        (f1, f2), flow = render(seed, args.width, args.height, args.noise)
        out = args.out_dir / f"street_s{seed}"
        out.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(out / "frame10.png"), f1)
        cv2.imwrite(str(out / "frame11.png"), f2)
        write_flo(out / "flow10.flo", flow)
        speed = np.hypot(flow[..., 0], flow[..., 1])
        print(f"{out}: {args.width} x {args.height}, largest motion {speed.max():.1f} px, "
              f"mean {speed.mean():.1f} px")


if __name__ == "__main__":
    main()
