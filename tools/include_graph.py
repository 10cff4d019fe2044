#!/usr/bin/env python3
"""ember's include graph against its layers (docs/design.md, "Layers").

Reads every header under include/ember (.hpp and .cuh), takes its floor from where it lives, and
prints each include that goes to a higher floor (an upward include) and each cycle of
includes. Exit status 1 if there is either, so that `ctest -R include_layers` keeps the layer
sentence of docs/design.md true.

usage: tools/include_graph.py [repo root] [--list]   (--list: every edge, for the record)
"""
import os
import re
import sys

# Floors, lowest first. A header may include its own floor and anything below it.
FLOORS = [  # the first entry that matches a header's path gives its floor
    ("core/", 0),
    ("detail/xsimd.hpp", 0),  # the SIMD wrapper core/simd.hpp uses
    ("io/save_npz.hpp", 7),  # a result into a file
    ("io/", 0),  # .npy/.npz bytes and durable files: no ember types
    ("detail/checkpoint.hpp", 0),  # a checkpoint's bytes
    ("detail/dense.hpp", 0),  # host dense linear algebra in double: no ember types
    ("data/device.cuh", 7),  # a data set's copy in device memory, for backend::cuda
    ("data/", 1),
    ("ad/", 2),  # reverse-mode nodes and model bodies
    ("energy/", 2),
    ("integrator/", 3),
    ("detail/kernel_diagnosis.hpp", 4),
    ("kernel/chees_hmc.hpp", 6),  # the default sampler: a kernel with its warm-up, i.e. a pipeline
    ("kernel/mams.hpp", 6),  # likewise MAMS
    ("kernel/", 4),
    ("pipeline/", 5),
    ("adapt/", 6),
    ("backend/", 7),
    ("diagnostics/", 7),
    ("host_cache.hpp", 7),
    ("result.hpp", 7),
    ("posterior.hpp", 7),  # a result in a model's terms
    ("sample_options.hpp", 7),
    ("run/", 8),
    ("sample.hpp", 9),
    ("targets/", 10),
    ("train/", 10),  # training neural energies: samplers inside an optimiser loop
    ("benchmark/", 10),
    ("distributions.hpp", 10),
    ("eigen.hpp", 10),
    ("host_templates.hpp", 10),
    ("library.hpp", 11),  # everything but a backend
    ("ember.hpp", 12),  # library.hpp and the CPU backends
    ("cuda.cuh", 12),  # the .cu umbrella: library.hpp and backend/cuda.cuh
    ("mpi.hpp", 12),  # opt-in: ember.hpp and backend::mpi over MPI ranks
]


def floor_of(rel):
    for prefix, f in FLOORS:
        if rel == prefix or rel.startswith(prefix):
            return f
    return None


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    base = os.path.join(root, "include", "ember")
    headers = []
    for d, _, files in os.walk(base):
        for f in files:
            if f.endswith((".hpp", ".cuh")):
                headers.append(os.path.relpath(os.path.join(d, f), base))
    edges = []
    inc = re.compile(r'^\s*#\s*include\s*<ember/([^>]+)>', re.M)
    for h in sorted(headers):
        with open(os.path.join(base, h), encoding="utf-8") as fh:
            for m in inc.finditer(fh.read()):
                edges.append((h, m.group(1)))
    unknown = sorted({h for h in headers if floor_of(h) is None})
    upward = [(a, b) for a, b in edges if floor_of(a) is not None and floor_of(b) is not None and floor_of(b) > floor_of(a)]

    # Cycles between headers (with #pragma once, one of them sees the other half-defined).
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    index, low, stack, on, sccs = {}, {}, [], set(), []

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            strong(v)

    if "--list" in sys.argv:
        for a, b in edges:
            print(f"{a} -> {b}")
    print(f"{len(headers)} headers, {len(edges)} includes of ember headers")
    for h in unknown:
        print(f"no floor for {h}: add it to FLOORS in tools/include_graph.py")
    for a, b in upward:
        print(f"upward: {a} (floor {floor_of(a)}) includes {b} (floor {floor_of(b)})")
    for c in sccs:
        print("cycle: " + " <-> ".join(c))
    print(f"{len(upward)} upward includes, {len(sccs)} cycles")
    return 1 if upward or sccs or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
