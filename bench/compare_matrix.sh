#!/usr/bin/env bash
# ember's benchmark matrix against BlackJAX (NUTS, ChEES, MALA, MAMS) and NumPyro (NUTS) on ember's
# reference targets, with the same metric (ESS/s and ESS per gradient of the slowest coordinate,
# gradients to b² < 0.01, health gates) and the same JSON lines (issue 13).
#
#   bash bench/compare_matrix.sh [--quick] [--targets LIST] [--impls ember,blackjax,numpyro]
#                                [--samplers nuts,nuts_dense,chees,mala,mams] [--chains 128] [--warmup 1000]
#                                [--draws 1000] [--precision float|double] [--replicates 1] [--out FILE]
#                                [--no-build] [--no-install] [--matrix ember_matrix_samplers]
#
# 1. bench/.venv (if missing) with the pinned peers of bench/peers/requirements-matrix.txt
#    (jax, BlackJAX, NumPyro, ArviZ; `pip install --no-deps`);
# 2. builds build-bench/bench/ember_export_targets (required) and ember's matrix binary
#    build-bench/bench/matrix/ember_matrix, or the matrix --matrix names (ember_matrix_samplers: ChEES,
#    NUTS and MAMS only, 30 configurations instead of 100; ember_matrix_dense: NUTS with a dense metric,
#    `--samplers nuts_dense`, on the targets of at most 64 dimensions) (a warning, not an error, when it
#    is absent or fails);
# 3. writes every target as JSON (build-bench/targets/), which the peers read and check against
#    ember's energy before sampling;
# 4. target by target, back to back, pinned to the same cores with 2 threads: ember's matrix
#    (`--only TARGET__`), then the peers (bench/peers/matrix_peer.py), same chains, warm-up, draws;
#    one JSON line per configuration on stdout and in FILE;
# 5. the tables (bench/peers/matrix_ratios.py, lines starting with '#').
# --replicates N runs every configuration, ember's and the peers', on seeds 1 … N (the tables
# compare the seeds' means).
# Progress goes to stderr. Exit status 1 if a peer crashed or a target check failed.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 2

TARGETS="standard_normal,ill_conditioned_gaussian,rotated_gaussian,neal_funnel,neal_funnel_noncentred,banana,rosenbrock_pairs,two_mode_mixture,eight_schools,breast_cancer_logistic"
IMPLS="ember,blackjax,numpyro"
SAMPLERS="nuts,chees,mala"
DEFAULT_TARGETS="$TARGETS" DEFAULT_SAMPLERS="$SAMPLERS"
CHAINS=128 WARMUP=1000 DRAWS=1000 PRECISION=float
OUT="" BUILD=1 INSTALL=1 MATRIX=ember_matrix REPLICATES=1
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) CHAINS=32 WARMUP=200 DRAWS=200 ;;
        --targets|--impls|--samplers|--chains|--warmup|--draws|--precision|--out|--matrix|--replicates)
            [ $# -ge 2 ] || { echo "compare_matrix.sh: $1 needs a value" >&2; exit 2; }
            flag="$1" v="$2"; shift
            case "$flag" in
                --targets) TARGETS="$v" ;; --impls) IMPLS="$v" ;; --samplers) SAMPLERS="$v" ;;
                --chains) CHAINS="$v" ;; --warmup) WARMUP="$v" ;; --draws) DRAWS="$v" ;;
                --precision) PRECISION="$v" ;; --out) OUT="$v" ;; --matrix) MATRIX="$v" ;;
                --replicates) REPLICATES="$v" ;;
            esac ;;
        --no-build) BUILD=0 ;;
        --no-install) INSTALL=0 ;;
        -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
        *) echo "compare_matrix.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
for n in "$CHAINS" "$WARMUP" "$DRAWS" "$REPLICATES"; do
    case "$n" in ''|*[!0-9]*) echo "compare_matrix.sh: --chains, --warmup, --draws and --replicates take positive integers, not '$n'" >&2; exit 2 ;; esac
done

log() { echo "[compare_matrix] $*" >&2; }
warn() { echo "[compare_matrix] WARNING: $*" >&2; }
# ember_matrix_dense holds the targets of at most 64 dimensions and nuts_dense only: the defaults
# follow it, so that the peers run what ember runs.
if [ "$MATRIX" = ember_matrix_dense ]; then
    [ "$TARGETS" = "$DEFAULT_TARGETS" ] && TARGETS="neal_funnel,neal_funnel_noncentred,banana,rosenbrock_pairs,two_mode_mixture,eight_schools,breast_cancer_logistic"
    [ "$SAMPLERS" = "$DEFAULT_SAMPLERS" ] && SAMPLERS="nuts_dense"
fi
has_impl() { case ",$IMPLS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
T_START=$(date +%s)

# ---------------------------------------------------------------- threads/cores, virtualenv
source "$ROOT/bench/peers/env.sh"
pin_to_two_cores
log "pinning to cpus $CPUS with $NTHREADS threads; $CHAINS chains, $WARMUP warm-up, $DRAWS draws, $PRECISION"
log "load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"

PEERS_OK=1
if has_impl blackjax || has_impl numpyro; then
    if [ "$INSTALL" = 1 ]; then
        setup_venv "$ROOT/bench/peers/requirements-matrix.txt" .ember-matrix-peers-installed \
            "import jax, blackjax, numpyro, arviz, optax" || PEERS_OK=0
    elif [ ! -x "$VPY" ]; then warn "--no-install given but $VPY is missing"; PEERS_OK=0; fi
fi

# ---------------------------------------------------------------- output file
if [ -z "$OUT" ]; then OUT="$(mktemp "${TMPDIR:-/tmp}/ember-compare-matrix.XXXXXX.jsonl")"; else : > "$OUT"; fi
log "JSON lines are also written to $OUT"
STATUS=0

# ---------------------------------------------------------------- builds
EXPORT_BIN="$ROOT/build-bench/bench/ember_export_targets"
case "$MATRIX" in ember_matrix|ember_matrix_samplers|ember_matrix_dense) ;; *) echo "compare_matrix.sh: --matrix is ember_matrix, ember_matrix_samplers or ember_matrix_dense" >&2; exit 2 ;; esac
MATRIX_BIN="$ROOT/build-bench/bench/matrix/$MATRIX"
if [ "$BUILD" = 1 ]; then
    t0=$(date +%s)
    log "configuring build-bench (Release) and building ember_export_targets"
    cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >&2 \
        && cmake --build build-bench --target ember_export_targets -j2 >&2 \
        || { warn "building ember_export_targets failed"; exit 1; }
    if has_impl ember; then
        # grep without -q: -q exits at the first match, cmake then dies of SIGPIPE and pipefail fails the test
        if cmake --build build-bench --target help 2>/dev/null | grep "\b$MATRIX\b" >/dev/null; then
            log "building $MATRIX (one translation unit per configuration; minutes)"
            cmake --build build-bench --target "$MATRIX" -j2 >&2 || warn "building $MATRIX failed"
        else
            warn "this tree has no ember_matrix target (bench/matrix/); ember lines are missing and ratios are n/a"
        fi
    fi
    log "built in $(( $(date +%s) - t0 )) s"
fi
TARGETS_DIR="$ROOT/build-bench/targets"
"$EXPORT_BIN" "$TARGETS_DIR" >&2 || { warn "ember_export_targets failed"; exit 1; }
HAVE_EMBER=0
if has_impl ember; then
    if [ -x "$MATRIX_BIN" ]; then HAVE_EMBER=1; else warn "no ember binary at $MATRIX_BIN; ember lines are missing"; fi
fi

# ---------------------------------------------------------------- runs, target by target
PEER_IMPLS=$(echo "$IMPLS" | tr ',' '\n' | grep -v '^ember$' | paste -sd, -)
IFS=',' read -r -a TARGET_LIST <<< "$TARGETS"
for t in "${TARGET_LIST[@]}"; do
    if [ "$HAVE_EMBER" = 1 ]; then
        t0=$(date +%s)
        "${PIN[@]}" "$MATRIX_BIN" --chains "$CHAINS" --warmup "$WARMUP" --draws "$DRAWS" --only "${t}__" \
            --seed 1 --replicates "$REPLICATES" \
            2> >(sed 's/^/[ember] /' >&2) | while IFS= read -r line; do
                case "$line" in "{"*) printf '%s\n' "$line" | tee -a "$OUT" ;; *) printf '[ember] %s\n' "$line" >&2 ;; esac
            done
        rc=${PIPESTATUS[0]}
        log "$t ember: $(( $(date +%s) - t0 )) s wall"
        [ "$rc" = 0 ] || { warn "$t ember_matrix: exit status $rc"; STATUS=1; }
    fi
    if [ "$PEERS_OK" = 1 ] && [ -n "$PEER_IMPLS" ]; then
        t0=$(date +%s)
        rc=0
        for seed in $(seq 1 "$REPLICATES"); do
            "${PIN[@]}" "$VPY" "$ROOT/bench/peers/matrix_peer.py" --targets-dir "$TARGETS_DIR" --target "$t" \
                --impl "$PEER_IMPLS" --sampler "$SAMPLERS" --chains "$CHAINS" --warmup "$WARMUP" --draws "$DRAWS" \
                --precision "$PRECISION" --seed "$seed" | tee -a "$OUT"
            [ "${PIPESTATUS[0]}" = 0 ] || rc=1
        done
        log "$t peers: $(( $(date +%s) - t0 )) s wall (process, imports and compilation included)"
        [ "$rc" = 0 ] || { warn "$t peers: exit status $rc (a crash or a target mismatch; see stderr)"; STATUS=1; }
    fi
done
[ "$PEERS_OK" = 1 ] || { warn "Python peers not run (virtualenv setup failed)"; STATUS=1; }

# ---------------------------------------------------------------- tables
log "load average at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
RPY="$VPY"; [ -x "$RPY" ] || RPY="${PYTHON:-python3}"
"$RPY" "$ROOT/bench/peers/matrix_ratios.py" --baseline ember "$OUT"
log "total $(( $(date +%s) - T_START )) s; JSON lines in $OUT"
exit $STATUS
