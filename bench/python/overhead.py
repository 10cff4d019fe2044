"""What a call from Python costs over the same call in C++: ember.sample on the 2-d banana with
ULA, 4 chains, no warm-up, one draw (so nearly all of it is the call's own work), against the same
pipeline through ember::sample timed inside the extension (ember._core._bench_cpp_sample), in the
same process; and `import ember`, a cached `ember.compile`. Prints one JSON line.
Run from ember's build: PYTHONPATH=build/python tools/.venv/bin/python bench/python/overhead.py"""
import json
import statistics
import subprocess
import sys
import time


def main(reps=2000, rounds=5):
    t0 = time.perf_counter()
    import ember

    import_s = time.perf_counter() - t0
    t = ember.targets.banana()
    py, cpp = [], []
    for _ in range(rounds):  # alternating, the median of each
        s0 = time.perf_counter()
        for i in range(reps):
            ember.sample(t, sampler="ula", step_size=0.01, chains=4, warmup=0, draws=1, seed=i, progress=False)
        py.append((time.perf_counter() - s0) / reps)
        cpp.append(ember._core._bench_cpp_sample(reps)[0])
    import_fresh = float(subprocess.run([sys.executable, "-c", "import time; t=time.perf_counter(); import ember; "
                                         "print(time.perf_counter()-t)"], capture_output=True, text=True).stdout)
    out = {"python_call_us": 1e6 * statistics.median(py), "cpp_call_us": 1e6 * statistics.median(cpp),
           "overhead_us": 1e6 * (statistics.median(py) - statistics.median(cpp)), "rounds": rounds, "reps": reps,
           "import_ember_s": import_fresh, "import_in_process_s": import_s}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
