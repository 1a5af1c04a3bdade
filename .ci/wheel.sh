#!/usr/bin/env bash
# CI: planaudit as a user outside the repository gets it. The wheel and the sdist are built
# (`python -m build`: the sdist, then the wheel from the sdist) from a copy of the checkout's
# files; the wheel is installed with its `interop` extra into a fresh virtual environment
# outside the checkout; then, from a folder outside the checkout with only that
# environment's commands on PATH: `planaudit --help`, `planaudit validate` on a packaged
# domain, `planaudit init`, a dry run of the default experiment and a pilot of every regime
# from the folder it writes, and `inspect eval planaudit/offline --model planaudit/oracle` on a few tasks.
# Runs from the repository root after the tests, with the project's .venv present (its
# `build`); prints each step's wall time and the total.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$(mktemp -d "${TMPDIR:-/tmp}/planaudit-wheel.XXXXXX")
# PLANAUDIT_WHEEL_KEEP=1 keeps the folder (the venv, the init'd run, the logs) to look at
if [ -n "${PLANAUDIT_WHEEL_KEEP:-}" ]; then
  trap 'echo "wheel: kept $WORK"' EXIT
else
  trap 'rm -rf "$WORK"' EXIT
fi
START=$SECONDS
step() {
  local name=$1 t0=$SECONDS; shift
  echo "wheel: step '$name'"
  "$@"
  echo "wheel: step '$name' took $((SECONDS - t0)) s (total $((SECONDS - START)) s)"
}
fail() { echo "wheel: FAILED: $*" >&2; exit 1; }

# the checkout's files as git would commit them (tracked, and new ones not ignored), copied
# so that the build writes no build/, dist/ or *.egg-info into the checkout
build() {
  mkdir -p "$WORK/src"
  git ls-files -z --cached --others --exclude-standard \
    | tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$WORK/src"
  "$ROOT/.venv/bin/python" -m build --outdir "$WORK/dist" "$WORK/src" > "$WORK/build.log" 2>&1 \
    || { tail -n 40 "$WORK/build.log"; fail "python -m build"; }
  ls -l "$WORK/dist"
}

# a fresh environment outside the checkout, the wheel with its interop extra (Inspect)
install() {
  local wheel
  wheel=$(echo "$WORK"/dist/planaudit-*.whl)
  python3 -m venv "$WORK/venv"
  # --no-compile: byte-compiling every dependency at install took most of its time
  # (4.5 min against 1.3 min measured on a busy 2-core machine); a module is compiled on
  # its first import instead
  { "$WORK/venv/bin/python" -m pip install --quiet --upgrade pip \
      && "$WORK/venv/bin/python" -m pip install --quiet --no-compile "$wheel[interop]"; } \
    > "$WORK/pip.log" 2>&1 || { tail -n 40 "$WORK/pip.log"; fail "pip install $wheel[interop]"; }
  "$WORK/venv/bin/python" -m pip list 2>/dev/null | grep -iE "^(planaudit|snakemake|inspect.ai) "
}

# from here on: only the new environment's commands (and the system's), in a folder
# outside the checkout, nothing of the checkout importable
outside() {
  (cd "$WORK/user" && env -u VIRTUAL_ENV -u PYTHONPATH PATH="$WORK/venv/bin:/usr/local/bin:/usr/bin:/bin" \
    PLANAUDIT_INSPECT_CACHE="$WORK/inspect-cache" "$@")
}

installed() {
  mkdir -p "$WORK/user"
  local where
  where=$(outside python -c "import planaudit; print(planaudit.__file__)")
  echo "planaudit imported from $where"
  case $where in "$WORK/venv/"*) ;; *) fail "planaudit is not the wheel's: $where" ;; esac
  outside planaudit --help > "$WORK/help.txt"
  grep -q "init" "$WORK/help.txt" || fail "planaudit --help names no init"
  head -n 3 "$WORK/help.txt"
}

validate() {
  local domains
  domains=$(outside python -c "import planaudit.paths as p; print(p.DOMAINS)")
  case $domains in "$WORK/venv/"*) ;; *) fail "the domains are not the wheel's: $domains" ;; esac
  printf '(pick ball1 rooma left)\n(move rooma roomb)\n(drop ball1 roomb left)\n' > "$WORK/user/plan.txt"
  outside planaudit validate "$domains/gripper/domain.pddl" "$domains/gripper/problems/p01.pddl" plan.txt
  # a plan that drops a ball it does not hold: the negative verdict, exit code 1
  printf '(move rooma roomb)\n(drop ball1 roomb left)\n' > "$WORK/user/bad.txt"
  local rc=0
  outside planaudit validate "$domains/gripper/domain.pddl" "$domains/gripper/problems/p01.pddl" bad.txt || rc=$?
  [ "$rc" = 1 ] || fail "an invalid plan gave exit code $rc, not 1"
}

# The default experiment itself runs in the tests (docs/tutorial/first-run.md, from a folder
# `planaudit init` wrote); here the installed wheel proves the same path more cheaply: a
# pilot of every regime on two Gripper tasks (a folder's own config, as docs/howto/pilot.md
# writes one) from the suite to the report, and a dry run that builds the whole default DAG.
experiment() {
  outside planaudit init run
  cat > "$WORK/user/run/config/pilot.yaml" <<'YAML'
suite:
  tasks: [gripper/p01, gripper/p09]
offline: {methods: [direct, modulo]}
online: {methods: [react], plan_settings: [none]}
curriculum: {tests: [t1], instances: 2}
acpbench: {types: [app], forms: [bool], tasks: 1, states: 1}
formalize: {methods: [problem], tasks: [p01]}
YAML
  outside sh -c 'cd run && snakemake -n --cores 2 > ../dry.log 2>&1' \
    || { tail -n 60 "$WORK/user/dry.log"; fail "snakemake -n (the whole default DAG) in the init'd folder"; }
  local total
  total=$(awk '$1 == "total" {print $2; exit}' "$WORK/user/dry.log")
  [ "${total:-0}" -gt 100 ] || fail "the default DAG's dry run lists ${total:-no} jobs"
  echo "the default experiment's DAG: $total jobs"
  outside sh -c 'cd run && snakemake --cores 2 --configfile config/pilot.yaml > ../snakemake.log 2>&1' \
    || { tail -n 60 "$WORK/user/snakemake.log"; fail "snakemake --cores 2 (a pilot) in the init'd folder"; }
  tail -n 4 "$WORK/user/snakemake.log"
  for f in results/episodes.parquet results/report/index.html results/suite/summary.csv; do
    [ -s "$WORK/user/run/$f" ] || fail "run/$f: missing or empty"
  done
  outside python -c "
import polars as pl
rows = pl.read_parquet('run/results/episodes.parquet')
print(rows.group_by('regime').len().sort('regime'))
assert set(rows['regime']) == {'offline', 'online', 'curriculum', 'acpbench', 'formalize'}, set(rows['regime'])
oracle = rows.filter((pl.col('model') == 'oracle') & pl.col('regime').is_in(['offline', 'online']))
outcomes = set(oracle['outcome'])
assert oracle.height and outcomes == {'success', 'detected'}, f'the oracle: {outcomes}'
"
  # Snakemake's own report (the figures and tables with their captions, from the package)
  outside sh -c 'cd run && snakemake --report report.html --cores 1 --configfile config/pilot.yaml > ../report.log 2>&1' \
    || { tail -n 30 "$WORK/user/report.log"; fail "snakemake --report in the init'd folder"; }
  [ -s "$WORK/user/run/report.html" ] || fail "run/report.html: missing or empty"
}

inspect_eval() {
  outside inspect eval planaudit/offline --model planaudit/oracle -T domain=gripper \
    -T tasks=p01,p02,p09 --log-dir logs --display none
  outside python -c "
import glob
from inspect_ai.log import read_eval_log
(path,) = glob.glob('logs/*.eval')
log = read_eval_log(path)
accuracy = log.results.scores[0].metrics['accuracy'].value
print(f'{log.eval.task}: {log.status}, {len(log.samples)} samples, accuracy {accuracy}')
assert log.status == 'success' and len(log.samples) == 3 and accuracy == 1.0
"
}

step build build
step install install
step help installed
step validate validate
step experiment experiment
step inspect inspect_eval
echo "wheel: all steps passed in $((SECONDS - START)) s"
