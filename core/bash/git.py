"""Git: the global options, the read-only subcommands and their flag tables.

Git is the command agents run most, and the one with the most ways to run other programs
from a read-only-looking command line: `-c core.pager=...`, `--config-env`, `--exec-path`,
`--git-dir` pointing at a prepared repository, diff drivers (`--ext-diff`, `--textconv`),
pagers (`-p`, `git grep -O`) and output files (`--output`). Every one of those is listed
below with its reason; everything not listed is refused as unknown. Git accepts unique
prefixes of long options, which the allow-lists refuse for free.

What git reads from the repository's own configuration (core.fsmonitor, diff drivers set
in .git/config) is outside what a command line can show; the file tools guard .git/.
"""

from __future__ import annotations

from core.bash.flags import WRITES_FILE, Spec, scan, spec, table

GLOBAL = spec(
    "-P --no-pager --no-optional-locks --literal-pathspecs --glob-pathspecs"
    " --noglob-pathspecs --icase-pathspecs --no-replace-objects --no-lazy-fetch --no-advice"
    " -C/ --version",
    ("-c: --config-env=", "sets configuration, which can name programs for git to run"),
    ("-p --paginate", "runs the configured pager"),
    (
        "--exec-path? --git-dir=/ --work-tree=/ --namespace= --super-prefix= --attr-source=",
        "points git at other programs, repositories or configuration",
    ),
    ("--help -h", "opens the manual in a pager or browser"),
    stop_at_operand=True,
)

# Diff output flags shared by log, show, diff and stash show. A flag whose value git takes
# only attached (`-U3`, `--unified=3`, `--format=%h`) is `?`: marked `:` it would swallow
# the next word, and `git diff -U --output=f` would hide a write (tests check each against
# git itself).
_DIFF = (
    " -p -u --patch -s --no-patch -U? --unified? --output-indicator-new="
    " --output-indicator-old= --output-indicator-context= --raw --patch-with-raw -t"
    " --indent-heuristic --no-indent-heuristic --minimal --patience --histogram --anchored="
    " --diff-algorithm= --stat? --compact-summary --numstat --shortstat --dirstat? --cumulative"
    " --dirstat-by-file? --summary --patch-with-stat -z --name-only --name-status"
    " --submodule? --color? --no-color --color-moved? --no-color-moved --color-moved-ws="
    " --no-color-moved-ws --word-diff? --word-diff-regex= --color-words? --no-renames"
    " --rename-empty --no-rename-empty --check --ws-error-highlight= --full-index --binary"
    " --abbrev? -B? --break-rewrites? -M? --find-renames? -C? --find-copies?"
    " --find-copies-harder -D --irreversible-delete -l: --diff-filter= -S: -G: --find-object="
    " --pickaxe-all --pickaxe-regex -O/ --skip-to= --rotate-to= -R --relative? --no-relative"
    " -a --text --ignore-cr-at-eol --ignore-space-at-eol -b --ignore-space-change -w"
    " --ignore-all-space --ignore-blank-lines -I: --ignore-matching-lines="
    " --inter-hunk-context= -W --function-context --exit-code --quiet --no-ext-diff"
    " --no-textconv --ignore-submodules? --src-prefix= --dst-prefix= --no-prefix"
    " --default-prefix --line-prefix= --ita-invisible-in-index --ita-visible-in-index"
    " --stat-width= --stat-name-width= --stat-graph-width= --stat-count= -m -c --cc --dd"
    " --combined-all-paths --remerge-diff --diff-merges= --no-diff-merges"
)
_UNSAFE_DIFF = (
    ("--output=/", "writes its output to a file", WRITES_FILE),
    ("--ext-diff", "runs the external diff program from the configuration"),
    ("--textconv", "runs text-conversion filters from the configuration"),
)
# Commit-limiting and formatting flags shared by log, show, shortlog, rev-list.
_REVS = (
    " -n: --max-count= --skip= --since= --after= --since-as-filter= --until= --before="
    " --author= --committer= --grep-reflog= --grep= --all-match --invert-grep -i"
    " --regexp-ignore-case --basic-regexp -E --extended-regexp -F --fixed-strings -P"
    " --perl-regexp --remove-empty --merges --no-merges --min-parents? --max-parents?"
    " --no-min-parents --no-max-parents --first-parent --exclude-first-parent-only --not"
    " --all --branches? --tags? --remotes? --glob= --exclude= --exclude-hidden= --reflog"
    " --alternate-refs --single-worktree --ignore-missing --bisect --cherry-mark"
    " --cherry-pick --left-only --right-only --cherry -g --walk-reflogs --merge --boundary"
    " --simplify-by-decoration --show-pulls --full-history --dense --sparse"
    " --simplify-merges --ancestry-path? --topo-order --date-order --author-date-order"
    " --reverse --objects --objects-edge --no-walk? --do-walk --pretty? --format?"
    " --abbrev-commit --no-abbrev-commit --oneline --encoding= --expand-tabs? --no-expand-tabs"
    " --notes? --no-notes --show-notes? --show-notes-by-default --relative-date --date="
    " --parents --children --left-right --graph --show-linear-break? --follow --decorate?"
    " --no-decorate --decorate-refs? --decorate-refs-exclude? --clear-decorations --source"
    " --mailmap --use-mailmap --no-mailmap --no-use-mailmap --full-diff --log-size -L?"
    " --no-standard-notes --standard-notes --count --timestamp --stdin --in-commit-order"
)
_LOG = spec(
    _DIFF + _REVS,
    *_UNSAFE_DIFF,
    ("--show-signature", "runs the configured signature-verification program"),
    numeric=True,
)
_BRANCH_LIST = (
    " -a --all -r --remotes -v -vv --verbose -q --quiet --abbrev? --no-abbrev --column?"
    " --no-column --sort= --merged: --no-merged: --contains: --no-contains: --points-at:"
    " --format= --color? --no-color -i --ignore-case --omit-empty"
)

# Given any of these, `git branch` and `git tag` only list (their operands are patterns);
# each takes the next word as its commit, or HEAD when it is the last word (git checks).
LIST_FILTERS = ("--merged", "--no-merged", "--contains", "--no-contains", "--points-at")

SUBCOMMANDS: dict[str, Spec] = {
    "config": spec(
        "--get --get-all --get-regexp --get-urlmatch -l --list --show-origin --show-scope"
        " --name-only -z --null --global --system --local --worktree -f/ --file=/ --blob="
        " --includes --no-includes --type= --bool --int --bool-or-int --path --expiry-date"
        " --default=",
        check="config",
    ),
    "show-branch": spec(
        "-r --remotes -a --all --current --topo-order --date-order --sparse --more? --list"
        " --merge-base --independent --no-name --sha1-name --topics -g? --reflog? --color?"
        " --no-color"
    ),
    "cherry": spec("-v --abbrev?"),
    "submodule": spec("--quiet -q --cached --recursive", check="submodule"),
    "status": spec(
        "-s --short -b --branch --show-stash --porcelain? --long -v --verbose -u?"
        " --untracked-files? --ignore-submodules? --ignored? -z --column? --no-column"
        " --ahead-behind --no-ahead-behind --renames --no-renames --find-renames?"
    ),
    "log": _LOG,
    "show": _LOG,
    "whatchanged": _LOG,
    "reflog": _LOG,
    "shortlog": spec(
        _REVS + " -s --summary -e --email -c --committer --group= -w? -n --numbered",
        numeric=True,
    ),
    "rev-list": _LOG,
    "diff": spec(
        _DIFF + " --cached --staged --merge-base --no-index -0 -1 -2 -3 --base --ours --theirs",
        *_UNSAFE_DIFF,
    ),
    "branch": spec(
        _BRANCH_LIST + " -l --list --show-current",
        (
            "-d -D --delete -m -M --move -c -C --copy -f --force -u: --set-upstream-to="
            " --unset-upstream --set-upstream --edit-description -t --track? --no-track"
            " --create-reflog --recurse-submodules",
            "creates, renames, deletes or reconfigures branches",
        ),
        check="listing",
    ),
    "tag": spec(
        _BRANCH_LIST + " -l --list -n?",
        (
            "-d --delete -v --verify -a --annotate -s --sign -u: --local-user= -f --force"
            " -m: --message= -F/ --file= -e --edit --cleanup= --create-reflog",
            "creates, deletes or verifies tags",
        ),
        check="listing",
    ),
    "rev-parse": spec(
        "--git-dir --git-common-dir --absolute-git-dir --show-toplevel --show-prefix"
        " --show-cdup --show-superproject-working-tree --show-ref-format --show-object-format?"
        " --is-inside-work-tree --is-inside-git-dir --is-bare-repository"
        " --is-shallow-repository --abbrev-ref? --short? --verify -q --quiet --symbolic"
        " --symbolic-full-name --all --branches? --tags? --remotes? --glob= --exclude="
        " --disambiguate= --local-env-vars --path-format= --git-path: --sq --sq-quote"
        " --not --revs-only --no-revs --flags --no-flags --default: --prefix: --since= --after="
        " --until= --before= --resolve-git-dir/ --end-of-options",
        operands_are_paths=False,
    ),
    "ls-files": spec(
        "-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others --ignored"
        " --stage --unmerged --killed --directory --no-empty-directory --eol --deduplicate"
        " --exclude-standard -x: --exclude= -X/ --exclude-from=/ --exclude-per-directory="
        " --error-unmatch --with-tree= --full-name --recurse-submodules --abbrev? --debug"
        " --sparse --format= --resolve-undo"
    ),
    "ls-tree": spec(
        "-d -r -t -l -z --long --name-only --name-status --object-only --full-name"
        " --full-tree --abbrev? --format="
    ),
    "blame": spec(
        "-b --root --show-stats --progress --no-progress --score-debug -f --show-name -n"
        " --show-number -p --porcelain --line-porcelain --incremental -s -e --show-email -w"
        " -c -t -l --abbrev? -L: --reverse? --first-parent --encoding= --contents=/ --date="
        " --ignore-rev= --ignore-revs-file=/ --color-lines --color-by-age --minimal -M? -C?"
        " -S/ --no-textconv --since= --mailmap --use-mailmap",
        ("--textconv", "runs text-conversion filters from the configuration"),
    ),
    "grep": spec(
        "--cached --untracked --no-index --no-exclude-standard --exclude-standard"
        " --recurse-submodules -a --text -i --ignore-case -I --max-depth= -r"
        " --recursive --no-recursive -w --word-regexp -v --invert-match -h -H --full-name -E"
        " --extended-regexp -G --basic-regexp -P --perl-regexp -F --fixed-strings -n"
        " --line-number --column -l --files-with-matches --name-only -L"
        " --files-without-match -z --null -o --only-matching -c --count --color? --no-color"
        " --break --heading -p --show-function -A: -B: -C: --after-context= --before-context="
        " --context= -W --function-context -m: --max-count= --threads= -f/ -e: --and --or"
        " --not ( ) -q --quiet --all-match",
        ("-O? --open-files-in-pager?", "opens the matches in a pager or editor"),
        ("--textconv", "runs text-conversion filters from the configuration"),
        numeric=True,
        pattern_first=frozenset({"-e", "-f"}),
    ),
    "for-each-ref": spec(
        "--count= --sort= --format= --color? --shell -s --perl -p --python --tcl --points-at="
        " --merged? --no-merged? --contains? --no-contains? --ignore-case --omit-empty",
        operands_are_paths=False,
    ),
    "name-rev": spec(
        "--tags --refs= --exclude= --all --annotate-stdin --name-only --no-undefined --always",
        operands_are_paths=False,
    ),
    "describe": spec(
        "--tags --all --long --abbrev? --always --dirty? --broken? --exact-match"
        " --candidates= --match= --exclude= --first-parent --contains --debug",
        operands_are_paths=False,
    ),
    "cat-file": spec(
        "-t -s -p -e --batch? --batch-check? --batch-command? --batch-all-objects --buffer"
        " --unordered --allow-unknown-type --follow-symlinks --use-mailmap --mailmap"
        " --no-mailmap -Z -z",
        ("--textconv --filters --path=", "runs conversion filters from the configuration"),
        operands_are_paths=False,
    ),
    "merge-base": spec("-a --all --octopus --independent --is-ancestor --fork-point"),
    "show-ref": spec(
        "--head --heads --branches --tags -d --dereference -s --hash? --abbrev? --verify -q"
        " --quiet --exists --exclude-existing?",
        operands_are_paths=False,
    ),
    "count-objects": spec("-v --verbose -H --human-readable", max_operands=0),
    "version": spec("--build-options", max_operands=0),
}

# `git remote` and `git stash` are read-only only in these forms.
REMOTE_READ = table("-v --verbose")
REMOTE_ACTIONS = {"show": spec("-n"), "get-url": spec("--push --all")}
STASH_ACTIONS = {"list": _LOG, "show": spec(_DIFF + " --include-untracked --only-untracked")}
WORKTREE_ACTIONS = {"list": spec("-v --verbose --porcelain -z --expire=")}


def split_global(args: tuple[str, ...]) -> tuple[str, str | None, tuple[str, ...], list[str]]:
    """(problem, subcommand, its arguments, paths from -C); problem is "" when understood."""
    found = scan(args, GLOBAL)
    if found.unknown:
        return f"uses the unknown git option `{found.unknown}`", None, (), found.paths
    if found.unsafe is not None:
        flag, why = found.unsafe
        return f"uses {flag}, which {why}", None, (), found.paths
    if not found.operands:
        return "", None, (), found.paths
    return "", found.operands[0], tuple(found.rest), found.paths
