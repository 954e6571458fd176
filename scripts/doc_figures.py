#!/usr/bin/env python3
"""Rerun the commands whose output the docs quote, and check or rewrite what the docs say.

Every figure README.md and docs/*.md quote from a command is tied to a marker, an HTML comment
(which Markdown does not render); docs/testing.md ("Doc figures come from commands") has the
convention in full:

  <!-- doc-figure: COMMAND -->      the fenced block right below is COMMAND's output (leading
                                   `$ ` lines of the block only show a command and are kept)
  <!-- doc-figure -->               each `$ ` line of the block below is run; the lines after
                                   it are its output
  <!-- doc-figure-check: COMMAND    COMMAND prints JSON and/or text; each `PATH = VALUE` line
    in: TEXT                       names a figure (a JSON path, `* 1000` or `/ 1e6` scaled, or
    PATH = VALUE ... -->           /REGEX/ with one group) and VALUE as the paragraph or table
                                   just above writes it (only its lines holding TEXT with `in:`)
  doc-figure-slow, doc-figure-check-slow: the same, rerun only with --slow

COMMAND is bash, run from a scratch copy of the repository root (every top-level entry linked,
`./build/servesim` and `servesim` on PATH the binary under test, $SERVESIM_BUILD its folder,
`../shared` the real one when there is one), so what it writes, `/tmp/...` paths included,
lands in a temporary folder removed afterwards; stdout and stderr are read together. Speed
figures are machine-dependent: progress lines are dropped, and a number next to `wall` or
`elapsed` is compared as `<t>`.

  python3 scripts/doc_figures.py --check      # exit 1, with a diff naming doc and line
  python3 scripts/doc_figures.py              # rewrite the stale blocks and figures
  python3 scripts/doc_figures.py --only docs/report.md --servesim build/servesim --slow
  python3 scripts/doc_figures.py --list
"""

import argparse
import concurrent.futures
import difflib
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from doc_figure_markers import NUMBER, json_value, occurrences, parse, render, sections

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
# Lines a long run may print on stderr while it works, and spdlog's time-stamped diagnostics
# (a measured table's warning, docs/data.md#checks-on-load): never a figure.
# A progress line ends "ETA 5s" or "1m05s elapsed" (cli/progress.cpp's duration_text: 5s, 1m05s,
# 2h01m or ?); one shows once a run takes over a second, so only a loaded machine prints them.
PROGRESS = re.compile(r"(ETA (?:\d|\?)|(?:\d[smh]?|\?) elapsed$|"
                      r"^\[\d{4}-\d\d-\d\d [\d:.]+\] \[servesim\] \[warning\] )")
# Wall-clock figures: the number is masked on both sides.
WALL = [
    re.compile(r"\d[\d,.]*(?=\s*(?:ms|s|seconds?|[a-z ]+/s)?\s*(?:of )?wall\b)"),
    re.compile(r"(?<=\bwall )\d[\d,.]*"),
    re.compile(r"\d[\d,.]*(?=\s*(?:ms|s)?\s*elapsed\b)"),
]


def docs():
    return ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(f"{ROOT}/docs/*.md"))


def reads_shared(command):
    if "shared/" in command:
        return True
    for token in re.findall(r"[\w./-]+\.(?:yaml|py)", command):
        path = os.path.join(ROOT, token)
        if os.path.isfile(path) and "shared/data" in open(path, encoding="utf-8").read():
            return True
    return False


def tracked_entries():
    """The repository root's entries that git tracks (never an output folder such as out/, which
    a command would then write into), or, outside a git checkout, all but build and output
    folders."""
    try:
        files = subprocess.run(["git", "-C", ROOT, "ls-files"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, check=True).stdout.split()
        names = {f.split("/")[0] for f in files}
    except (OSError, subprocess.CalledProcessError):
        names = set(os.listdir(ROOT))
    return sorted(n for n in names if n not in ("build", ".git", "out")
                  and not n.startswith(("build-", "servesim-"))
                  and os.path.exists(os.path.join(ROOT, n)))


class Sandbox:
    """A scratch copy of the repository root: links to every entry, a build/ of the binary."""

    def __init__(self, servesim):
        self.servesim = servesim
        self.top = tempfile.mkdtemp(prefix="doc-figures-")
        self.cwd = os.path.join(self.top, "repo")
        os.makedirs(self.cwd)
        os.makedirs(os.path.join(self.top, "tmp"))
        os.makedirs(os.path.join(self.top, "bin"))
        for name in tracked_entries():
            os.symlink(os.path.join(ROOT, name), os.path.join(self.cwd, name))
        build = os.path.join(self.cwd, "build")
        os.makedirs(build)
        os.symlink(servesim, os.path.join(build, "servesim"))
        os.symlink(servesim, os.path.join(self.top, "bin", "servesim"))
        python = os.path.join(os.path.dirname(servesim), "python")
        if os.path.isdir(python):
            os.symlink(python, os.path.join(build, "python"))
        if os.path.isdir(SHARED):
            os.symlink(SHARED, os.path.join(self.top, "shared"))

    def run(self, command, timeout):
        """The command's output lines; raises TimeoutError past `timeout` seconds."""
        command = re.sub(r"(?<![\w./-])/tmp/", self.top + "/tmp/", command)
        env = dict(os.environ)
        env["PATH"] = os.path.join(self.top, "bin") + os.pathsep + env.get("PATH", "")
        env["COLUMNS"] = "100"
        env["SERVESIM_BUILD"] = os.path.dirname(self.servesim)
        try:
            p = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=self.cwd, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=timeout)
            text = p.stdout.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"the command ran past {timeout} s (--timeout)")
        text = text.replace(self.top + "/tmp/", "/tmp/").replace(self.cwd + "/", "")
        text = text.replace(self.cwd, ".").replace(self.top, "/tmp")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return [ln.rstrip() for ln in lines if not PROGRESS.search(ln)]

    def close(self):
        shutil.rmtree(self.top, ignore_errors=True)


def masked(lines):
    out = []
    for ln in lines:
        for pattern in WALL:
            ln = pattern.sub("<t>", ln)
        out.append(ln.rstrip())
    return out


def evaluate(fig, output):
    """A doc-figure-check: [(expr, literal, what the command gives now, error)]."""
    text = "\n".join(output)
    data = None
    results = []
    for expr, literal in fig.checks:
        try:
            if expr.startswith("/") and expr.endswith("/") and len(expr) > 1:
                m = re.search(expr[1:-1], text, re.M)
                if not m:
                    raise KeyError(f"no match for {expr}")
                raw = m.group(1)
                num = NUMBER.match(raw)
                value = float(raw.replace(",", "").rstrip("%")) if num else raw
            else:
                if data is None:
                    # The first JSON document that starts a line (text may come before it).
                    at = re.search(r"^[{\[]", text, re.M)
                    if not at:
                        raise ValueError("the command printed no JSON")
                    data, _ = json.JSONDecoder().raw_decode(text, at.start())
                value, _ = json_value(data, expr)
            results.append((expr, literal, render(value, literal), None))
        except (KeyError, IndexError, TypeError, ValueError) as e:
            results.append((expr, literal, None, f"{type(e).__name__}: {e}"))
    return results


def run_figure(fig, servesim, timeout):
    """(figure, new block lines or check results, seconds)."""
    start = time.time()
    box = Sandbox(servesim)
    timeout = timeout * 5 if fig.slow else timeout
    try:
        if fig.kind == "check":
            return fig, evaluate(fig, box.run(fig.command, timeout)), time.time() - start
        if fig.command:
            shown = []
            for ln in fig.block:
                if not ln.startswith("$ ") and not (shown and shown[-1].endswith("\\")):
                    break
                shown.append(ln)
            return fig, shown + box.run(fig.command, timeout), time.time() - start
        new = []
        for cmd, shown, _ in sections(fig.block):
            new += shown + box.run(cmd, timeout)
        return fig, new, time.time() - start
    except TimeoutError as e:
        return fig, e, time.time() - start
    finally:
        box.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    ap.add_argument("--servesim", default=os.path.join(ROOT, "build", "servesim"))
    ap.add_argument("--only", action="append", default=[],
                    help="docs whose path (or path:line of the marker) contains this; repeatable")
    ap.add_argument("--slow", action="store_true", help="also the doc-figure-slow markers")
    ap.add_argument("--list", action="store_true", help="list the markers and exit")
    ap.add_argument("--docs", nargs="+", metavar="FILE",
                    help="these Markdown files instead of README.md and docs/*.md")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=120,
                    help="seconds a command may run (five times that for a -slow marker)")
    args = ap.parse_args()
    servesim = os.path.abspath(args.servesim)

    texts, figures = {}, []
    for doc in args.docs or docs():
        with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
            texts[doc] = f.read().split("\n")
        figures += parse(doc, texts[doc])
    if args.only:
        figures = [f for f in figures if any(o in f.where() or o == f.doc for o in args.only)]
        if not figures:
            print(f"doc_figures.py: no marker matches --only {' '.join(args.only)}",
                  file=sys.stderr)
            return 2
    if args.list:
        for f in figures:
            kind = f.kind + (", slow" if f.slow else "")
            print(f"{f.where()} [{kind}] {f.command or '(the $ lines)'}")
        return 0
    if not os.access(servesim, os.X_OK):
        print(f"doc_figures.py: no servesim binary at {servesim} (--servesim PATH)",
              file=sys.stderr)
        return 2

    todo, skipped = [], []
    for f in figures:
        commands = f.command if f.command else " ".join(c for c, _, _ in sections(f.block))
        first = commands.splitlines()[0]
        if f.slow and not args.slow:
            skipped.append(f"{f.where()}: a slow figure (--slow reruns it): {first}")
        elif reads_shared(commands) and not os.path.isdir(os.path.join(SHARED, "data")):
            skipped.append(f"{f.where()}: reads ../shared/data, absent here: {first}")
        else:
            todo.append(f)

    stale, edits, slowest = [], {}, []
    unfixed = 0  # what a rewrite cannot fix: a failed command, a figure not found or written twice
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for fig, new, secs in pool.map(lambda f: run_figure(f, servesim, args.timeout), todo):
            slowest.append((secs, fig.where()))
            if isinstance(new, Exception):
                stale.append(f"{fig.where()}: {new}; the doc is left as it is")
                unfixed += 1
                continue
            judge = judge_check if fig.kind == "check" else judge_block
            found_stale, found_edits, cannot = judge(fig, new, texts[fig.doc], args.check)
            stale += found_stale
            edits.setdefault(fig.doc, []).extend(found_edits)
            unfixed += cannot

    for line in skipped:
        print(f"SKIP {line}")
    for s in stale:
        print(f"STALE {s}")
    slowest.sort(reverse=True)
    print(f"doc_figures: {len(todo)} figures rerun, {len(stale)} stale, {len(skipped)} skipped"
          + (f"; slowest {slowest[0][1]} {slowest[0][0]:.1f} s" if slowest else ""))
    if args.check:
        return 1 if stale else 0
    for doc, changes in edits.items():
        if changes:
            apply_edits(texts[doc], changes)
            with open(os.path.join(ROOT, doc), "w", encoding="utf-8") as f:
                f.write("\n".join(texts[doc]))
            print(f"rewrote {doc}")
    if unfixed:
        print(f"doc_figures: {unfixed} left to fix by hand (above)")
    return 1 if unfixed else 0


def judge_block(fig, new, lines, check):
    """(stale messages, edits, figures a rewrite cannot fix) of a block marker."""
    if masked(fig.block) == masked(new):
        return [], [], 0
    diff = difflib.unified_diff(fig.block, new, f"{fig.doc}:{fig.fence[0] + 1} (the doc)",
                                f"`{fig.command or 'the $ lines'}` (now)", lineterm="", n=1)
    return ([f"{fig.where()}: the block below differs from what its command prints now\n"
             + "\n".join(diff)], [("block", fig.fence[0], fig.fence[1], new, fig.indent)], 0)


def judge_check(fig, results, lines, check):
    """(stale messages, edits, figures a rewrite cannot fix) of a doc-figure-check."""
    para = [ln if fig.row is None or fig.row in ln else ""
            for ln in lines[fig.para[0] : fig.para[1]]]
    stale, edits, cannot = [], [], 0
    for expr, literal, now, error in results:
        found = occurrences(para, literal)
        if error:
            stale.append(f"{fig.where()}: {expr}: {error} (from `{fig.command}`)")
            cannot += 1
        elif not found:
            stale.append(f"{fig.where()}: {literal!r} ({expr}) is not in the text above the "
                         f"marker (lines {fig.para[0] + 1}-{fig.para[1]})")
            cannot += 1
        elif now != literal:
            twice = len(found) > 1 and not check
            stale.append(f"{fig.where()}: {expr} is {now} now; the doc says {literal} (line "
                         f"{fig.para[0] + found[0][0] + 1}"
                         f"{', written more than once: fix it by hand' if twice else ''})")
            cannot += twice
            if len(found) == 1:
                k, m = found[0]
                edits += [("text", fig.para[0] + k, m.start(), m.end(), now),
                          ("check", fig.line - 1, expr, literal, now)]
    return stale, edits, cannot


def apply_edits(lines, changes):
    """Rewrites `lines` bottom-up, so that earlier line numbers stay right."""
    for change in sorted(changes, key=lambda c: (c[1], c[2] if c[0] == "text" else 0),
                         reverse=True):
        if change[0] == "block":
            _, first, last, new, indent = change
            lines[first:last] = [(indent + ln) if ln else ln for ln in new]
        elif change[0] == "text":
            _, k, a, b, now = change
            lines[k] = lines[k][:a] + now + lines[k][b:]
        else:  # the figure's line in the marker
            _, k, expr, literal, now = change
            pattern = re.compile(r"^(\s*" + re.escape(expr) + r"\s*=\s*)" + re.escape(literal)
                                 + r"(\s*(?:-->)?\s*)$")
            while not pattern.match(lines[k]):
                k += 1
            m = pattern.match(lines[k])
            lines[k] = m.group(1) + now + m.group(2)


if __name__ == "__main__":
    sys.exit(main())
