#!/usr/bin/env python3
"""Measures the explorer window's frames on a config: median and 90th percentile of the frame
interval and of the UI thread's CPU time per frame (app/frame_log.rs), while the engine plays.

Opens `examples/config_window` (1360 x 840, the config already playing, repainting back to back)
on an X display, discards a warm-up, then reads the per-frame lines for a while. UI-thread CPU
per frame is the number that carries over between machines and loads: the window keeps 30 fps
on one core while it stays well under 33 ms.

    cargo build --release --example config_window
    Xvfb :82 -screen 0 1400x900x24 &
    DISPLAY=:82 python3 scripts/measure_window.py CONFIG.json [KEY=VALUE ...] [--seconds 20] [--warmup 8]

CONFIG.json is a scenario's name, for its defaults, followed by KEY=VALUE changes
(`denoise max_iters=100000 tolerance=0`), or a results.json (e.g. from `beliefscope run denoise
--width 512 --height 512 --iters 1 --out DIR`, with `max_iters` raised so the run outlasts the
measurement), or a bare config with its "scenario" tag. Prints one line of numbers; writes no
files. With `--max-ui-p90 MS` it exits with status 1 when the UI thread's CPU per frame has a
90th percentile above MS.
"""

import argparse
import os
import select
import signal
import subprocess
import sys
import time


def quantile(values, q):
    if not values:
        return float("nan")
    s = sorted(values)
    rank = min(len(s), max(1, int(-(-q * len(s) // 1))))
    return s[rank - 1]


def field(line, key):
    for part in line.split():
        if part.startswith(key + "="):
            return part.split("=", 1)[1]
    return None


def thread_cpu(pid):
    """CPU seconds per thread group of the process: the UI thread (the main thread), the GL
    driver's threads (Mesa's llvmpipe rasterisers under Xvfb) and the rest (the engine)."""
    tick = os.sysconf("SC_CLK_TCK")
    groups = {"ui": 0.0, "gl": 0.0, "engine": 0.0}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        seconds = (int(fields[11]) + int(fields[12])) / tick
        if int(tid) == pid:
            groups["ui"] += seconds
        elif comm.startswith("llvmpipe") or comm.startswith("gallium"):
            groups["gl"] += seconds
        else:
            groups["engine"] += seconds
    return groups


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("config", help="a config JSON file or a scenario's name (its defaults)")
    parser.add_argument("overrides", nargs="*", help="KEY=VALUE changes, as --set takes them")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=8.0)
    parser.add_argument("--binary", default=None, help="config_window binary")
    parser.add_argument("--label", default="")
    parser.add_argument("--max-ui-p90", type=float, default=None, help="fail above this, ms")
    args = parser.parse_args()
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    binary = args.binary or os.path.join(target, "release", "examples", "config_window")
    env = dict(os.environ)
    env["BELIEFSCOPE_FRAME_LOG"] = "all"
    env["BELIEFSCOPE_CONTINUOUS_REPAINT"] = "1"
    proc = subprocess.Popen(
        [binary, args.config, *args.overrides], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env, text=True
    )
    start = time.monotonic()
    intervals, cpus, last_iteration, playing_frames = [], [], None, 0
    # The warm-up starts with the first frame of a playing engine (set-up can take a while).
    playing_since, cpu_start, cpu_end = None, None, None
    try:
        while playing_since is None or time.monotonic() - playing_since < args.warmup + args.seconds:
            if time.monotonic() - start > 600:
                break
            ready, _, _ = select.select([proc.stderr], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            line = proc.stderr.readline()
            if not line:
                break
            if not line.startswith("frame ") or field(line, "engine_playing") != "true":
                continue
            if playing_since is None:
                playing_since = time.monotonic()
            if time.monotonic() - playing_since < args.warmup:
                continue
            if cpu_start is None:
                cpu_start = thread_cpu(proc.pid)
            cpu_end = thread_cpu(proc.pid)
            playing_frames += 1
            intervals.append(float(field(line, "interval_ms")))
            cpu = field(line, "ui_cpu_ms")
            if cpu not in (None, "-"):
                cpus.append(float(cpu))
            last_iteration = field(line, "iteration")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
    if not intervals:
        print("no frames while the engine played (did the run finish during the warm-up?)")
        sys.exit(1)
    p50 = quantile(intervals, 0.5)
    print(
        f"{args.label} frames={playing_frames} "
        f"interval_ms p50={p50:.1f} p90={quantile(intervals, 0.9):.1f} (fps {1000 / p50:.1f}) "
        f"ui_cpu_ms p50={quantile(cpus, 0.5):.1f} p90={quantile(cpus, 0.9):.1f} "
        f"last_iteration={last_iteration}"
    )
    if cpu_start and cpu_end and playing_frames > 1:
        per_frame = {k: (cpu_end[k] - cpu_start[k]) * 1e3 / (playing_frames - 1) for k in cpu_end}
        print(
            f"{args.label} mean CPU per frame from /proc (10 ms ticks): "
            f"ui_thread={per_frame['ui']:.1f} ms gl_threads={per_frame['gl']:.1f} ms "
            f"engine={per_frame['engine']:.1f} ms"
        )
    if args.max_ui_p90 is not None and quantile(cpus, 0.9) > args.max_ui_p90:
        print(f"{args.label} FAIL: UI-thread CPU per frame p90 above {args.max_ui_p90} ms")
        sys.exit(1)


if __name__ == "__main__":
    main()
