#!/usr/bin/env bash
# The mutation run (mutmut) over what users trust most: the permission decisions
# (core/permissions), the kernel fence (core/sandbox) and the executor (core/executor).
# Not part of CI: all three packages take hours on one worker. The baseline and the
# survivors left on purpose are in docs/mutation.md.
#
# Shaped for a two-core machine that others share: one worker by default
# (MUTATION_WORKERS=2 when the machine is yours), `nice -n 19`, and a target per package
# or per file so a part can be checked on its own. mutmut picks the tests per mutant
# itself: a first pass records which tests reach which function (the selection is
# `[tool.mutmut]` in pyproject.toml), then each mutant runs only those.
#
#   scripts/mutation.sh                           every package, resuming: settled mutants stand
#   scripts/mutation.sh permissions executor      these packages, every mutant tried again
#   scripts/mutation.sh core/permissions/decide.py  one file
#   scripts/mutation.sh --alone sandbox           one package in its own copy (.mutation/sandbox/)
#                                                 with only its own tests and a tighter timeout:
#                                                 the form that fits a shared two-core machine
#   scripts/mutation.sh --summary                 killed / survived per package so far
#   .venv/bin/mutmut show core.permissions.decide.x_decide__mutmut_3   one mutant's diff
set -euo pipefail
cd "$(dirname "$0")/.."

mutmut=.venv/bin/mutmut
[[ -x $mutmut ]] || { echo "mutmut is not installed: .venv/bin/pip install -e '.[test,dev]'" >&2; exit 2; }

summary() {
    # `mutmut results --all true` prints "name: status" per mutant.
    "$mutmut" results --all true | python3 -c '
import collections, sys
counts = collections.defaultdict(collections.Counter)
for line in sys.stdin:
    name, sep, status = line.strip().rpartition(": ")
    if sep and name.startswith("core."):
        counts[".".join(name.split(".")[:2])][status] += 1
for package, by_status in sorted(counts.items()):
    print(package.ljust(18), ", ".join(f"{n} {s}" for s, n in sorted(by_status.items())))
'
}

if [[ ${1-} == --summary ]]; then
    [[ -d mutants ]] && summary
    # the sandbox's own run (below) keeps its results in its scratch copy
    [[ -d .mutation/sandbox/mutants ]] && (cd .mutation/sandbox && mutmut=../../.venv/bin/mutmut && summary)
    exit 0
fi

# --alone PACKAGE [FILE...]: mutate one package against the tests that are about it, in a
# copy of its own, so the map of which tests reach what is built from a few hundred tests
# instead of eleven hundred, and a mutant that makes a call hang is stopped at 4x its
# tests' time instead of mutmut's 15x. The copy's results stand until it is deleted.
if [[ ${1-} == --alone ]]; then
    package=${2-}
    case $package in
        sandbox) tests=("tests/core/sandbox") ;;
        *)
            echo "--alone knows: sandbox (permissions and executor use the whole selection)" >&2
            exit 2
            ;;
    esac
    shift 2
    patterns=()
    for target in "$@"; do
        [[ $target == core/$package/*.py && -f $target ]] || { echo "not a file of core/$package: $target" >&2; exit 2; }
        module=${target%.py}
        patterns+=("${module//\//.}.*")
    done
    copy=.mutation/$package
    mkdir -p "$copy"
    rm -rf "$copy/core" "$copy/tests"
    cp -r core tests pyproject.toml "$copy/"
    .venv/bin/python - "$copy/pyproject.toml" "$package" "${tests[@]}" <<'PY'
import json, pathlib, sys
path, package, tests = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
text = path.read_text()
start = text.index("[tool.mutmut]")
end = text.find("\n[", start + 1)
path.write_text(text[:start] + f'''[tool.mutmut]
source_paths = ["core"]
only_mutate = ["core/{package}/*"]
timeout_multiplier = 4.0
pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:randomly", "-q"]
pytest_add_cli_args_test_selection = {json.dumps(tests)}
''' + (text[end:] if end >= 0 else ""))
PY
    started=$SECONDS
    (cd "$copy" && nice -n 19 ../../"$mutmut" run --max-children "${MUTATION_WORKERS:-1}" "${patterns[@]}")
    echo "took $(((SECONDS - started) / 60)) min"
    cd "$copy" && mutmut=../../$mutmut summary
    exit 0
fi

patterns=()
for target in "$@"; do
    case $target in
        permissions | executor | sandbox) patterns+=("core.$target.*") ;;
        core/permissions/*.py | core/executor/*.py | core/sandbox/*.py)
            [[ -f $target ]] || { echo "no such file: $target" >&2; exit 2; }
            module=${target%.py}
            patterns+=("${module//\//.}.*")
            ;;
        *)
            echo "not a target: $target (permissions, executor, sandbox, or a .py file under them)" >&2
            exit 2
            ;;
    esac
done

started=$SECONDS
nice -n 19 "$mutmut" run --max-children "${MUTATION_WORKERS:-1}" "${patterns[@]}"
echo "took $(((SECONDS - started) / 60)) min"
summary
