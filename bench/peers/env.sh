# Shared set-up of the peer comparisons (compare_cpu.sh, compare_matrix.sh), sourced after the
# script has defined ROOT, log and warn.
#
# pin_to_two_cores: 2 threads on cores 0,1 (1 on a 1-core machine) for ember and every peer's
#   thread pool; sets NTHREADS, CPUS and PIN (the taskset prefix, empty without taskset).
# setup_venv REQ MARKER IMPORTS [POST]: bench/.venv with the pinned requirements REQ
#   (`pip install --no-deps`), then the Python script POST if given, reinstalled only when REQ
#   or POST change; MARKER names the stamp file; IMPORTS is the Python import line that must
#   succeed afterwards. VENV and VPY name the virtualenv.

pin_to_two_cores() {
    NTHREADS=2
    if [ "$(nproc 2>/dev/null || echo 1)" -ge 2 ]; then CPUS="0,1"; else CPUS="0"; NTHREADS=1; fi
    export EMBER_BENCH_THREADS=$NTHREADS EMBER_BENCH_CPUS=$CPUS
    export OMP_NUM_THREADS=$NTHREADS MKL_NUM_THREADS=$NTHREADS OPENBLAS_NUM_THREADS=$NTHREADS
    # XLA:CPU sizes its thread pool from the affinity mask (taskset); it has no thread-count
    # flag (unknown flags in XLA_FLAGS abort the process).
    export XLA_FLAGS="--xla_cpu_multi_thread_eigen=true"
    export JAX_PLATFORMS=cpu
    export PYTHONDONTWRITEBYTECODE=1   # no __pycache__ in bench/peers
    if command -v taskset >/dev/null 2>&1; then
        PIN=(taskset -c "$CPUS")
    else
        warn "taskset not found (util-linux); peers pin themselves with sched_setaffinity, ember runs unpinned"
        PIN=()
    fi
}

VENV="$ROOT/bench/.venv"
VPY="$VENV/bin/python"

setup_venv() {
    local req="$1" marker="$VENV/$2" imports="$3" post="${4:-}" t0 stamp
    t0=$(date +%s)
    stamp="$(cat "$req" ${post:+"$post"} | sha256sum | cut -d' ' -f1)"
    if [ -x "$VPY" ] && [ -f "$marker" ] && [ "$(cat "$marker")" = "$stamp" ]; then
        log "bench/.venv is up to date"
        return 0
    fi
    if [ ! -x "$VPY" ]; then
        log "creating bench/.venv with ${PYTHON:-python3} ($("${PYTHON:-python3}" --version 2>&1))"
        "${PYTHON:-python3}" -m venv "$VENV" || { warn "could not create $VENV"; return 1; }
    fi
    log "installing the pinned peers of ${req#"$ROOT"/} into bench/.venv"
    "$VPY" -m pip install --disable-pip-version-check --no-deps -r "$req" >&2 \
        || { warn "pip install failed"; return 1; }
    if [ -n "$post" ]; then "$VPY" "$post" || { warn "$post failed"; return 1; }; fi
    "$VPY" -c "$imports" >&2 || { warn "an installed peer does not import"; return 1; }
    echo "$stamp" > "$marker"
    log "installed in $(( $(date +%s) - t0 )) s; bench/.venv is $(du -sh "$VENV" | cut -f1)"
}
