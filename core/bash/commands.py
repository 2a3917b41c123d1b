"""The read-only commands and their flag tables, as data.

Only commands listed here can be read-only, and only with the flags listed for them
(see flags.py for the table syntax). Flags that write files or run programs are listed
too, with the reason, so a refusal can say why and touched_paths can still find their
paths; an unlisted flag is refused without a reason beyond "unknown".

Commands whose arguments need more than a table (git, find, sed, awk, xargs, date,
printf, env, command) name a `check` that readonly.py implements. Interactive pagers
(less, more), interpreters (python, node, sh) and anything that edits, fetches or
installs are absent on purpose.
"""

from __future__ import annotations

from core.bash.flags import WRITES_FILE, Spec, spec

_NO_OPERANDS: dict[str, int] = {"max_operands": 0}

# Shared by the checksum tools: `-c` checks sums listed in a file, which only reads.
_SUM = spec(
    "-b -c -t -z -w --binary --check --text --tag --zero --ignore-missing --quiet --status"
    " --strict --warn --help --version -l: --length="
)

READ_ONLY: dict[str, Spec] = {
    "ls": spec(
        "-a -A -b -B -c -C -d -D -f -F -g -G -h -H -i -k -l -L -m -n -N -o -p -q -Q -r -R -s"
        " -S -t -u -U -v -x -X -Z -1 -e -O -T -@ -w: -I: --all --almost-all --author --escape"
        " --block-size= --ignore-backups --color? --colour? --directory --dired --classify?"
        " --file-type --format= --full-time --group-directories-first --no-group"
        " --human-readable --si --dereference-command-line"
        " --dereference-command-line-symlink-to-dir --hide= --hyperlink? --indicator-style="
        " --inode --ignore= --kibibytes --dereference --literal --numeric-uid-gid"
        " --hide-control-chars --show-control-chars --quote-name --quoting-style= --reverse"
        " --recursive --size --sort= --time= --time-style= --tabsize= --width= --context"
        " --zero --help --version"
    ),
    "cat": spec(
        "-A -b -e -E -n -s -t -T -u -v -l --show-all --number-nonblank --show-ends --number"
        " --squeeze-blank --show-tabs --show-nonprinting --help --version"
    ),
    "head": spec(
        "-c: -n: -q -v -z --bytes= --lines= --quiet --silent --verbose --zero-terminated"
        " --help --version",
        numeric=True,
    ),
    "tail": spec(
        "-c: -n: -f -F -q -v -z -s: -r --bytes= --lines= --follow? --retry --pid="
        " --sleep-interval= --max-unchanged-stats= --quiet --silent --verbose"
        " --zero-terminated --help --version",
        numeric=True,
    ),
    "wc": spec(
        "-c -m -l -L -w --bytes --chars --lines --max-line-length --words --total="
        " --files0-from=/ --help --version"
    ),
    "grep": spec(
        "-E -F -G -P -e: -f/ -i -y -v -w -x -c -l -L -m: -o -q -s -b -H -h -n -T -u -Z -z -a"
        " -I -d: -D: -r -R -U -A: -B: -C: --extended-regexp --fixed-strings --basic-regexp"
        " --perl-regexp --regexp= --file=/ --ignore-case --no-ignore-case --invert-match"
        " --word-regexp --line-regexp --count --color? --colour? --files-without-match"
        " --files-with-matches --max-count= --only-matching --quiet --silent --no-messages"
        " --byte-offset --with-filename --no-filename --label= --line-number --initial-tab"
        " --null --null-data --text --binary-files= --devices= --directories= --exclude="
        " --exclude-from=/ --exclude-dir= --include= --recursive --dereference-recursive"
        " --line-buffered --binary --after-context= --before-context= --context= --help"
        " --version",
        numeric=True,
        pattern_first=frozenset({"-e", "-f", "--regexp", "--file"}),
    ),
    "rg": spec(
        "-e: -f/ -g: -t: -T: -A: -B: -C: -m: -M: -j: -d: -E: -r: -a -c -F -H -I -i -l -L -n -N"
        " -o -p -q -s -S -u -U -v -w -x -0 -b -h -P -V -. --regexp= --file=/ --glob= --iglob="
        " --type= --type-not= --type-add= --type-clear= --type-list --after-context="
        " --before-context= --context= --max-count= --max-columns= --max-columns-preview"
        " --threads= --max-depth= --maxdepth= --encoding= --replace= --text --count"
        " --count-matches --fixed-strings --with-filename --no-filename --no-heading --heading"
        " --ignore-case --smart-case --case-sensitive --files-with-matches"
        " --files-without-match --follow --line-number --no-line-number --only-matching"
        " --pretty --quiet --invert-match --word-regexp --line-regexp --null --null-data"
        " --byte-offset --pcre2 --no-pcre2 --engine= --multiline --multiline-dotall --hidden"
        " --no-hidden --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-global"
        " --no-ignore-parent --no-ignore-exclude --no-ignore-files --ignore-file=/"
        " --ignore-file-case-insensitive --no-config --files --json --vimgrep --column"
        " --no-column --color= --colors= --sort= --sortr= --stats --trim --unrestricted"
        " --binary --no-binary --one-file-system --passthru --line-buffered --block-buffered"
        " --crlf --debug --trace --no-messages --no-unicode --max-filesize= --path-separator="
        " --field-match-separator= --field-context-separator= --context-separator="
        " --no-context-separator --include-zero --glob-case-insensitive --help --version",
        (
            "--pre= --pre-glob=",
            "runs a preprocessor program on every file it searches",
        ),
        ("--hostname-bin=", "runs a program to learn the host name"),
        ("-z --search-zip", "runs decompression programs on compressed files"),
        numeric=True,
        pattern_first=frozenset({"-e", "-f", "--regexp", "--file", "--files", "--type-list"}),
    ),
    "sort": spec(
        "-b -d -f -g -i -M -h -n -R -r -V -c -C -m -s -u -z -k: -t: -S: -T/ --ignore-leading-blanks"
        " --dictionary-order --ignore-case --general-numeric-sort --ignore-nonprinting"
        " --month-sort --human-numeric-sort --numeric-sort --random-sort --random-source=/"
        " --reverse --version-sort --sort= --check? --merge --key= --field-separator="
        " --buffer-size= --temporary-directory=/ --unique --zero-terminated --stable --debug"
        " --parallel= --batch-size= --files0-from=/ --help --version",
        ("-o/ --output=/", "writes the sorted result to a file", WRITES_FILE),
        ("--compress-program=", "runs a program to compress temporary files"),
    ),
    "uniq": spec(
        "-c -d -D -f: -i -s: -u -w: -z --count --repeated --all-repeated? --skip-fields="
        " --ignore-case --skip-chars= --unique --check-chars= --zero-terminated --group?"
        " --help --version",
        max_operands=1,  # a second operand is the output file
    ),
    "cut": spec(
        "-b: -c: -d: -f: -n -s -z --bytes= --characters= --delimiter= --fields= --complement"
        " --only-delimited --output-delimiter= --zero-terminated --help --version"
    ),
    "tr": spec(
        "-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1 --help --version",
        operands_are_paths=False,
    ),
    "nl": spec(
        "-b: -d: -f: -h: -i: -l: -n: -p -s: -v: -w: --body-numbering= --section-delimiter="
        " --footer-numbering= --header-numbering= --line-increment= --join-blank-lines="
        " --number-format= --no-renumber --number-separator= --starting-line-number="
        " --number-width= --help --version"
    ),
    "diff": spec(
        "-i -E -Z -b -w -B -a -r -N -P -s -q -c -u -e -n -y -t -T -l -d -H -p -C: -U: -W: -x:"
        " -X/ -S: -I: -F: -D: --normal --brief --report-identical-files --context?"
        " --unified? --ed --rcs --side-by-side --width= --left-column --suppress-common-lines"
        " --show-c-function --show-function-line= --label= --expand-tabs --initial-tab"
        " --tabsize= --suppress-blank-empty --paginate --recursive --no-dereference"
        " --new-file --unidirectional-new-file --ignore-file-name-case"
        " --no-ignore-file-name-case --exclude= --exclude-from=/ --starting-file="
        " --from-file=/ --to-file=/ --ignore-case --ignore-tab-expansion"
        " --ignore-trailing-space --ignore-space-change --ignore-all-space"
        " --ignore-blank-lines --ignore-matching-lines= --text --strip-trailing-cr"
        " --ifdef= --line-format= --old-line-format= --new-line-format="
        " --unchanged-line-format= --old-group-format= --new-group-format="
        " --changed-group-format= --unchanged-group-format= --minimal --horizon-lines="
        " --speed-large-files --color? --palette= --help --version",
        numeric=True,
    ),
    "cmp": spec(
        "-b -i: -l -n: -s --print-bytes --ignore-initial= --verbose --bytes= --quiet --silent"
        " --help --version"
    ),
    "comm": spec(
        "-1 -2 -3 -z --check-order --nocheck-order --output-delimiter= --total"
        " --zero-terminated --help --version"
    ),
    "column": spec(
        "-t -x -e -n -c: -s: -o: -N: -R: -J -r: -E: -H: -W: -T: -l: -L -d --table"
        " --fillrows --columns= --separator= --output-separator= --table-columns="
        " --table-right= --json --help --version"
    ),
    "stat": spec(
        "-L -f -t -c: --dereference --file-system --format= --printf= --terse --cached="
        " --help --version -x -s -n -q -r -l -F"
    ),
    "du": spec(
        "-0 -a -b -c -D -h -H -k -l -L -m -P -s -S -x -d: -t: -B: -X/ --null --all"
        " --apparent-size --block-size= --bytes --total --dereference-args --max-depth="
        " --human-readable --inodes --count-links --dereference --no-dereference"
        " --separate-dirs --si --summarize --threshold= --time? --time-style="
        " --exclude-from=/ --exclude= --one-file-system --files0-from=/ --help --version"
    ),
    "df": spec(
        "-a -h -H -i -k -l -P -T -B: -t: -x: --all --block-size= --human-readable --si"
        " --inodes --local --no-sync --sync --output? --portability --total --type="
        " --print-type --exclude-type= --help --version"
    ),
    "tree": spec(
        "-a -d -l -f -x -i -q -N -Q -p -u -g -s -h -D -F -r -t -c -U -v -C -n -J -X -A -S"
        " -L: -P: -I: --gitignore --noreport --dirsfirst --filesfirst --charset= --prune"
        " --filelimit= --du --si --inodes --device --matchdirs --ignore-case --sort="
        " --metafirst --info --fromfile --help --version",
        ("-o/", "writes the listing to a file", WRITES_FILE),
        ("-R", "with -H or -o writes an index file into every directory"),
        check="tree",  # refuses clusters (readonly.py)
    ),
    "file": spec(
        "-b -c -d -E -h -i -k -l -L -n -N -p -r -s -S -z -Z -0 -e: -f/ -F: -m/ -P: --brief"
        " --checking-printout --exclude= --exclude-quiet= --extension --files-from=/"
        " --separator= --mime --mime-type --mime-encoding --keep-going --list"
        " --dereference --no-dereference --no-buffer --preserve-date --raw --special-files"
        " --uncompress --uncompress-noreport --no-sandbox --print0 --magic-file=/"
        " --parameter= --help --version",
        ("-C --compile", "compiles magic files and writes the result to disk"),
    ),
    "base64": spec(
        "-d -D -i -w: -b: --decode --ignore-garbage --wrap= --break= --help --version",
        ("-o/ --output=/", "writes the result to a file (BSD and macOS base64)", WRITES_FILE),
        max_operands=1,
    ),
    "xxd": spec(
        "-a -b -C -E -e -i -p -r -u -d -c: -g: -l: -n: -o: -s: -R: -ps -cols: -len: -seek:"
        " -autoskip -bits -capitalize -include -plain -postscript -revert -uppercase -help"
        " -version",
        max_operands=1,  # the second operand is the output file it writes
        single_dash_words=True,
    ),
    "od": spec(
        "-A: -j: -N: -t: -S: -w? -v -a -b -c -d -f -i -l -o -s -x -D -e -F -H -I -L -O -X -B"
        " --address-radix= --endian= --skip-bytes= --read-bytes= --strings? --format="
        " --output-duplicates --width? --traditional --help --version"
    ),
    "hexdump": spec(
        "-b -c -C -d -o -x -v -L? -e: -f/ -n: -s: --one-byte-octal --one-byte-char"
        " --canonical --two-bytes-decimal --two-bytes-octal --two-bytes-hex --format="
        " --format-file=/ --length= --skip= --no-squeezing --color? --help --version"
    ),
    "strings": spec(
        "-a -d -f -w -n: -t: -e: -s: -T: -U: --all --data --print-file-name --bytes="
        " --radix= --encoding= --include-all-whitespace --output-separator= --target="
        " --unicode= --help --version",
        numeric=True,
    ),
    "sha256sum": _SUM,
    "sha1sum": _SUM,
    "sha512sum": _SUM,
    "sha224sum": _SUM,
    "sha384sum": _SUM,
    "md5sum": _SUM,
    "b2sum": _SUM,
    "cksum": spec("-a: --algorithm= --base64 --raw --tag --untagged -l: --length= -c --check"),
    "jq": spec(
        "-n -r -j -a -s -c -C -M -S -e -h -V --null-input --raw-input -R --raw-output"
        " --raw-output0 --join-output --ascii-output --slurp --compact-output --tab"
        " --indent= --color-output --monochrome-output --sort-keys --exit-status --seq"
        " --stream --stream-errors --arg: --argjson: --args --jsonargs --unbuffered -L/"
        " --help --version",
        # jq's `--arg NAME VALUE` takes two words; the table reads one, so the value is then
        # counted as the filter or a file, which only makes touched_paths stricter.
        ("-f/ --from-file=/ --slurpfile: --rawfile:", "reads its program or data from a file"),
        pattern_first=frozenset({"-f", "--from-file"}),
        check="jq",  # refuses module imports (readonly.py)
    ),
    "pwd": spec("-L -P --help --version", **_NO_OPERANDS),
    # The directories a `cd` may lead to are worked out by the decision chain, which judges
    # every later path from each of them (core/permissions/decide.py, shell_directories).
    "cd": spec("-L -P -e", max_operands=1, check="cd"),
    "whoami": spec("--help --version", **_NO_OPERANDS),
    "id": spec("-a -g -G -n -r -u -z -Z --context --group --groups --name --real --user --zero"),
    "groups": spec("--help --version", operands_are_paths=False),
    "uname": spec(
        "-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release"
        " --kernel-version --machine --processor --hardware-platform --operating-system"
        " --help --version",
        **_NO_OPERANDS,
    ),
    "hostname": spec(
        "-a -A -d -f -i -I -s -y -v --alias --all-fqdns --domain --fqdn --long --ip-address"
        " --all-ip-addresses --short --yp --nis --verbose --help --version",
        ("-F/ --file=/ -b --boot", "sets the host name"),
        **_NO_OPERANDS,  # an operand sets the host name
    ),
    "which": spec("-a -s --all --skip-alias --help --version", operands_are_paths=False),
    "type": spec("-a -f -p -P -t", operands_are_paths=False),
    "basename": spec(
        "-a -s: -z --multiple --suffix= --zero --help --version", operands_are_paths=False
    ),
    "dirname": spec("-z --zero --help --version", operands_are_paths=False),
    "realpath": spec(
        "-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing --logical"
        " --physical --quiet --strip --no-symlinks --zero --relative-to=/ --relative-base=/"
        " --help --version"
    ),
    "readlink": spec(
        "-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing"
        " --canonicalize-missing --no-newline --quiet --silent --verbose --zero --help"
        " --version"
    ),
    "tac": spec("-b -r -s: --before --regex --separator= --help --version"),
    "rev": spec("--help --version"),
    "paste": spec("-d: -s -z --delimiters= --serial --zero-terminated --help --version"),
    "fold": spec("-b -s -w: --bytes --spaces --width= --help --version", numeric=True),
    "expand": spec("-i -t: --initial --tabs= --help --version"),
    "seq": spec(
        "-f: -s: -w --format= --separator= --equal-width --help --version",
        operands_are_paths=False,
    ),
    "sleep": spec("--help --version", operands_are_paths=False),
    "nproc": spec("--all --ignore= --help --version", **_NO_OPERANDS),
    "arch": spec("--help --version", **_NO_OPERANDS),
    "true": spec("", operands_are_paths=False, check="anything"),
    "false": spec("", operands_are_paths=False, check="anything"),
    "echo": spec("", operands_are_paths=False, check="anything"),
    "test": spec("", operands_are_paths=False, check="test"),
    "[": spec("", operands_are_paths=False, check="test"),
    "[[": spec("", operands_are_paths=False, check="test"),
    # Report on processes and the system only: whatever their words, nothing is written.
    "ps": spec("", operands_are_paths=False, check="anything"),
    "uptime": spec("-p -s --pretty --since --help --version", operands_are_paths=False),
    "join": spec(
        "-a: -e: -i --ignore-case -j: -o: -t: -v: -1: -2: --check-order --nocheck-order"
        " --header -z --zero-terminated --help --version"
    ),
    "fmt": spec(
        "-c -p: -s -t -u -w: -g: --crown-margin --prefix= --split-only --tagged-paragraph"
        " --uniform-spacing --width= --goal= --help --version"
    ),
    "printf": spec("", operands_are_paths=False, check="printf"),
    "printenv": spec("-0 --null --help --version", operands_are_paths=False),
    "env": spec("", operands_are_paths=False, check="env"),
    "command": spec("", operands_are_paths=False, check="command"),
    "date": spec(
        "-u -R -I? -d: -f/ -r/ --date= --file=/ --iso-8601? --rfc-3339= --rfc-email"
        " --reference=/ --utc --universal --debug --resolution --help --version",
        ("-s: --set=", "sets the system clock"),
        operands_are_paths=False,
        check="date",
    ),
    "man": spec(
        "-a -f -k -w -W -K -u -i -I -s: -S: -M: -L: -m: -e: --all --whatis --apropos --where"
        " --path --location --location-cat --global-apropos --sections= --manpath="
        " --locale= --systems= --extension= --ignore-case --match-case --regex --wildcard"
        " --names-only --no-subpages --no-hyphenation --no-justification --update --help"
        " --version",
        ("-P: --pager=", "runs the given program as the pager"),
        ("-H? --html?", "starts a web browser"),
        ("-l --local-file", "formats an arbitrary local file, which can run preprocessors"),
        ("-p: --preprocessor=", "runs preprocessors named on the command line"),
        ("-C/ --config-file=/", "reads a configuration that can name the pager and filters"),
        (
            "-t -T? -Z -X? -R: --troff --troff-device? --ditroff --gxditview? --recode=",
            "runs troff output stages or writes converted pages",
        ),
        operands_are_paths=False,
        check="man",
    ),
    "find": spec("", check="find"),
    "sed": spec("", check="sed"),
    "awk": spec("", check="awk"),
    "gawk": spec("", check="awk"),
    "mawk": spec("", check="awk"),
    "git": spec("", check="git"),
    "xargs": spec("", check="xargs"),
}

# Commands read_only never accepts but whose operands touched_paths can still tell apart,
# so a write inside the working directory can be recognised as one.
# grep's old names, with grep's options.
READ_ONLY["egrep"] = READ_ONLY["fgrep"] = READ_ONLY["grep"]

WRITERS: dict[str, Spec] = {
    "mkdir": spec("-p -v -m: -Z --parents --verbose --mode= --context? --help --version"),
    "touch": spec(
        "-a -c -h -m -f -d: -t: -r/ --no-create --no-dereference --date= --reference=/"
        " --time= --help --version"
    ),
    "rm": spec(
        "-f -i -I -r -R -d -v --force --interactive? --one-file-system --no-preserve-root"
        " --preserve-root? --recursive --dir --verbose --help --version"
    ),
    "rmdir": spec("-p -v --ignore-fail-on-non-empty --parents --verbose --help --version"),
    "mv": spec(
        "-b -f -i -n -u -v -T -Z -S: -t/ --backup? --force --interactive --no-clobber"
        " --strip-trailing-slashes --suffix= --target-directory=/ --no-target-directory"
        " --update? --verbose --context --exchange --no-copy --help --version"
    ),
    "cp": spec(
        "-a -b -d -f -i -H -l -L -n -P -p -R -r -s -u -v -x -T -Z -S: -t/ --archive"
        " --attributes-only --backup? --copy-contents --force --interactive --link"
        " --dereference --no-clobber --no-dereference --preserve? --no-preserve= --parents"
        " --recursive --reflink? --remove-destination --sparse= --strip-trailing-slashes"
        " --symbolic-link --suffix= --target-directory=/ --no-target-directory --update?"
        " --verbose --one-file-system --context? --keep-directory-symlink --debug --help"
        " --version"
    ),
}
