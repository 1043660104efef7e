#!/usr/bin/env python3
"""OpenCV optical-flow peers for the flow scenario: Farneback and DIS (medium preset) on
Middlebury pairs, with EPE / AAE defined as in results.json (ground-truth components above 1e9
are unknown and excluded) and the median wall time of a few runs.

A benchmark peer, not a dependency of beliefscope: on first use it creates a virtual
environment (default `.venv-opencv` beside this script, or --venv) and installs
opencv-python-headless and numpy into it with pip, then re-runs itself there.

    python3 scripts/opencv_flow_peer.py                       # ../shared/data/middlebury/*
    python3 scripts/opencv_flow_peer.py --pairs DIR1 DIR2     # folders with frame10/11 + flow10.flo
    python3 scripts/opencv_flow_peer.py --json out.json

Each pair folder holds frame10.png, frame11.png and flow10.flo (frame10 -> frame11).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def ensure_venv(venv: Path) -> None:
    """Re-executes this script inside `venv` (created with opencv if missing)."""
    if os.environ.get("BELIEFSCOPE_OPENCV_VENV") == str(venv):
        return
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv} and installing opencv-python-headless ...", file=sys.stderr)
        subprocess.check_call([sys.executable, "-m", "venv", str(venv)])
        subprocess.check_call(
            [str(python), "-m", "pip", "install", "--quiet", "opencv-python-headless", "numpy"]
        )
    env = dict(os.environ, BELIEFSCOPE_OPENCV_VENV=str(venv))
    os.execve(str(python), [str(python), str(Path(__file__).resolve())] + sys.argv[1:], env)


def read_flo(path: Path):
    import numpy as np

    with open(path, "rb") as f:
        tag = np.fromfile(f, np.float32, 1)
        if tag.size != 1 or abs(tag[0] - 202021.25) > 1e-3:
            raise ValueError(f"{path}: not a Middlebury .flo file (bad tag)")
        w, h = np.fromfile(f, np.int32, 2)
        data = np.fromfile(f, np.float32, 2 * w * h)
        if data.size != 2 * w * h:
            raise ValueError(f"{path}: truncated ({data.size} of {2 * w * h} values)")
    return data.reshape(h, w, 2).astype(np.float64)


def errors(flow, gt):
    """EPE (px) and AAE (degrees) over the pixels with known ground truth."""
    import numpy as np

    known = (np.abs(gt[..., 0]) <= 1e9) & (np.abs(gt[..., 1]) <= 1e9)
    u, v = flow[..., 0][known], flow[..., 1][known]
    gu, gv = gt[..., 0][known], gt[..., 1][known]
    epe = np.sqrt((u - gu) ** 2 + (v - gv) ** 2).mean()
    num = u * gu + v * gv + 1.0
    den = np.sqrt(u * u + v * v + 1.0) * np.sqrt(gu * gu + gv * gv + 1.0)
    aae = np.degrees(np.arccos(np.clip(num / den, -1.0, 1.0))).mean()
    return float(epe), float(aae)


def methods():
    import cv2

    def farneback(a, b):
        # OpenCV's documented example settings (pyramid 0.5, 3 levels, window 15).
        return cv2.calcOpticalFlowFarneback(a, b, None, 0.5, 3, 15, 3, 5, 1.2, 0)

    dis = cv2.DISOpticalFlow_create(cv2.DISOPTICAL_FLOW_PRESET_MEDIUM)

    def dis_medium(a, b):
        return dis.calc(a, b, None)

    return [("farneback", farneback), ("dis_medium", dis_medium)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", nargs="*", type=Path, help="pair folders (frame10/11.png, flow10.flo)")
    ap.add_argument("--venv", type=Path, default=HERE / ".venv-opencv")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per method (median)")
    ap.add_argument("--json", type=Path, help="also write the table as JSON")
    args = ap.parse_args()
    ensure_venv(args.venv.resolve())

    import cv2

    pairs = args.pairs
    if not pairs:
        root = REPO / ".." / "shared" / "data" / "middlebury"
        pairs = sorted(p for p in root.glob("*") if (p / "flow10.flo").exists())
    if not pairs:
        sys.exit("no pairs given and none found under ../shared/data/middlebury")
    cv2.setNumThreads(2)
    rows = []
    print(f"OpenCV {cv2.__version__}, {cv2.getNumThreads()} threads")
    print(f"{'pair':<14} {'method':<11} {'EPE':>7} {'AAE':>7} {'ms':>9}")
    for pair in pairs:
        a = cv2.imread(str(pair / "frame10.png"), cv2.IMREAD_GRAYSCALE)
        b = cv2.imread(str(pair / "frame11.png"), cv2.IMREAD_GRAYSCALE)
        if a is None or b is None:
            sys.exit(f"{pair}: cannot read frame10.png / frame11.png")
        gt = read_flo(pair / "flow10.flo")
        if gt.shape[:2] != a.shape:
            sys.exit(f"{pair}: ground truth is {gt.shape[1]} x {gt.shape[0]}, frames {a.shape[1]} x {a.shape[0]}")
        for name, run in methods():
            times = []
            for _ in range(max(1, args.repeats)):
                t0 = time.perf_counter()
                flow = run(a, b)
                times.append(time.perf_counter() - t0)
            epe, aae = errors(flow, gt)
            ms = 1e3 * statistics.median(times)
            rows.append({"pair": pair.name, "method": name, "epe": epe, "aae": aae, "median_ms": ms})
            print(f"{pair.name:<14} {name:<11} {epe:7.3f} {aae:7.2f} {ms:9.1f}")
    if args.json:
        args.json.write_text(json.dumps({"opencv": cv2.__version__, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
