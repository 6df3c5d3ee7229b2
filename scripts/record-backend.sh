#!/usr/bin/env bash
# Measure one backend where it runs and record its budgets: how torch-cuda is recorded on a
# machine with a GPU (README, "Budgets measured elsewhere"). The project's budgets file is
# copied, never written in place; bring OUTDIR/budgets.toml back and review the diff.
#   scripts/record-backend.sh OUTDIR [BACKEND]        (BACKEND: torch-cuda by default)
# Each step has its own time limit (seconds, STEP_LIMIT) so that one slow step cannot cost
# the others; every step's exit status is logged in OUTDIR/steps.txt. STEPS names the steps
# to run (default: "report budgets suite consistency sweep"); a later run with, say,
# STEPS=consistency STEP_LIMIT=600 records what an earlier one ran out of time for, into an
# OUTDIR/budgets.toml it finds there.
set -uo pipefail
out=${1:?usage: scripts/record-backend.sh OUTDIR [BACKEND]}
backend=${2:-torch-cuda}
workers=${WORKERS:-$(nproc)}
limit=${STEP_LIMIT:-150}
budgets=$out/budgets.toml
steps=" ${STEPS:-report budgets suite consistency sweep} "
mkdir -p "$out"
[ -f "$budgets" ] || cp src/gelucheck/data/budgets.toml "$budgets"
echo "# $(date -u +%FT%TZ) $backend: $steps" >> "$out/steps.txt"

step() {  # step NAME LOG COMMAND... (NAME's first word must be in STEPS)
    local name=$1 log=$2 start=$SECONDS rc
    shift 2
    [[ $steps == *" ${name%% *} "* ]] || return 0
    timeout "$limit" "$@" > "$log" 2>&1
    rc=$?
    echo "$name: exit $rc in $((SECONDS - start)) s" | tee -a "$out/steps.txt"
}
# gelucheck installed, its dependencies not: on an image that has torch and no index,
# `pip install --no-deps --no-build-isolation -e .` (its backends are entry points, which a
# bare PYTHONPATH=src does not declare), plus tomlkit, which writes the budgets
python3 -c 'import importlib.metadata as m; m.distribution("gelucheck")' 2>/dev/null || {
    echo "record-backend.sh: gelucheck is not installed: pip install --no-deps -e ." >&2; exit 2; }
gelucheck=(python3 -m gelucheck.cli)

python3 -m gelucheck.cli --version > "$out/probe.txt"
python3 - >> "$out/probe.txt" 2>&1 <<'PY'
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda,
      torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU")
PY
step report "$out/report.txt" "${gelucheck[@]}" report --backend "$backend" --no-progress \
    --json "$out/report.json" --markdown "$out/report.md"
step budgets "$out/budgets.txt" "${gelucheck[@]}" budgets --write "$budgets" --from-report "$out/report.json"
step suite "$out/suite.txt" python3 -m pytest -q -p no:cacheprovider -n "$workers" \
    --pyargs gelucheck.suite --gelucheck-backend "$backend" --gelucheck-budgets "$budgets" \
    -m "not exhaustive and not consistency"
step consistency "$out/consistency.txt" "${gelucheck[@]}" consistency --backend "$backend" \
    --no-progress --workers "$workers" --json "$out/consistency.json" --write-budgets "$budgets"
for f in ${SWEEP_FUNCTIONS-phi gelu gelu_tanh phi_grad gelu_grad gelu_tanh_grad erf erfc}; do
    step "sweep $f" "$out/sweep_$f.txt" "${gelucheck[@]}" sweep --backend "$backend" --function "$f" \
        --no-progress --workers "$workers" --json "$out/sweep_$f.json" --write-budgets "$budgets"
done
