#!/usr/bin/env python3
"""PGMax (JAX) as a speed peer of discrete BP: loopy sum-product BP on a W x H 4-connected grid
with C states per pixel, the size of the denoise scenario's discrete-BP run, timed per
iteration on the CPU.

A benchmark peer, not a dependency of beliefscope: on first use it creates a virtual
environment (default `.venv-pgmax` beside this script, or --venv) and installs pgmax 0.6.1 with
JAX 0.4.30 into it with pip (current JAX no longer has `jax.lib.xla_bridge`, which pgmax 0.6.1
calls), then re-runs itself there.

    python3 scripts/pgmax_peer.py                      # 100 x 100, C = 10 and 50
    python3 scripts/pgmax_peer.py --colors 10 50 100 --iters 20 --repeats 5

The model has random log potentials (seeded): a pairwise table shared by every edge and a unary
table per pixel; the time of a BP iteration does not depend on the values. One call of
`bp.run` with `--iters` iterations is compiled and run once, then timed `--repeats` times; the
median divided by the iterations is the time per iteration. PGMax runs ordinary loopy BP in the
log domain (temperature 1: sum-product) with damping 0.5, as beliefscope's default does.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def ensure_venv(venv: Path) -> None:
    """Re-executes this script inside `venv` (created with pgmax if missing)."""
    if os.environ.get("BELIEFSCOPE_PGMAX_VENV") == str(venv):
        return
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv} and installing pgmax 0.6.1 ...", file=sys.stderr)
        subprocess.check_call([sys.executable, "-m", "venv", str(venv)])
        subprocess.check_call(
            [str(python), "-m", "pip", "install", "--quiet", "pgmax==0.6.1", "jax==0.4.30", "jaxlib==0.4.30"]
        )
    env = dict(os.environ, BELIEFSCOPE_PGMAX_VENV=str(venv))
    os.execve(str(python), [str(python), str(Path(__file__).resolve())] + sys.argv[1:], env)


def seconds_per_iteration(width, height, colors, iters, repeats):
    import jax
    import numpy as np
    from pgmax import fgraph, fgroup, infer, vgroup

    rng = np.random.default_rng(0)
    variables = vgroup.NDVarArray(num_states=colors, shape=(height, width))
    graph = fgraph.FactorGraph(variable_groups=variables)
    pairs = []
    for y in range(height):
        for x in range(width):
            if x + 1 < width:
                pairs.append([variables[y, x], variables[y, x + 1]])
            if y + 1 < height:
                pairs.append([variables[y, x], variables[y + 1, x]])
    table = rng.normal(size=(colors, colors))
    graph.add_factors(
        fgroup.PairwiseFactorGroup(variables_for_factors=pairs, log_potential_matrix=table)
    )
    bp = infer.build_inferer(graph.bp_state, backend="bp")
    evidence = {variables: rng.normal(size=(height, width, colors))}

    def run():
        arrays = bp.init(evidence_updates=evidence)
        arrays = bp.run(arrays, num_iters=iters, damping=0.5, temperature=1.0)
        jax.block_until_ready(arrays.ftov_msgs)

    run()  # compiles
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) / iters


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--width", type=int, default=100)
    ap.add_argument("--height", type=int, default=100)
    ap.add_argument("--colors", type=int, nargs="+", default=[10, 50])
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--venv", type=Path, default=HERE / ".venv-pgmax")
    args = ap.parse_args()
    ensure_venv(args.venv.resolve())
    import jax
    import pgmax

    print(f"PGMax {getattr(pgmax, '__version__', '?')}, JAX {jax.__version__} on {jax.devices()[0].platform}")
    for colors in args.colors:
        s = seconds_per_iteration(args.width, args.height, colors, args.iters, args.repeats)
        print(f"pgmax {args.width}x{args.height} C={colors}: {s * 1e3:.2f} ms per iteration")


if __name__ == "__main__":
    main()
