"""The markers of scripts/doc_figures.py (docs/testing.md, "Doc figures come from commands"):
finding them in a Markdown file, and reading and writing the figures a doc-figure-check names."""

import re

MARKER = re.compile(r"^\s*<!-- doc-figure(-check)?(-slow)?(?::|(?= |-->))(.*)$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)")
NUMBER = re.compile(r"^([-+]?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(%?)$")


class Figure:
    """One marker and what it covers."""

    def __init__(self, doc, line, kind, command, fence=None, block=None, checks=None):
        self.doc, self.line, self.kind, self.command = doc, line, kind, command
        self.fence = fence  # (first, last) line index of the block's body, 0-based, last excl.
        self.block = block  # the block's body lines
        self.checks = checks or []  # (expr, literal) pairs of a doc-figure-check
        self.para = None  # (first, last) line index of the text the checks read
        self.indent = ""  # a block inside a list item is indented
        self.row = None  # a doc-figure-check's `in: TEXT`: only the lines holding TEXT
        self.slow = False  # -slow: rerun only with --slow

    def where(self):
        return f"{self.doc}:{self.line}"


def parse(doc, lines):
    """The markers of one document."""
    figures, i = [], 0
    in_fence = None
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if in_fence:
            if fence and lines[i].strip() == in_fence:
                in_fence = None
            i += 1
            continue
        if fence:
            in_fence = fence.group(2)
            i += 1
            continue
        m = MARKER.match(lines[i])
        if not m:
            i += 1
            continue
        start = i
        text = m.group(3)
        while "-->" not in text:
            i += 1
            if i == len(lines):
                raise SystemExit(f"{doc}:{start + 1}: doc-figure marker without its closing -->")
            text += "\n" + lines[i]
        text = text[: text.index("-->")].strip()
        kind = "check" if m.group(1) else "block"
        slow = bool(m.group(2))
        i += 1
        if kind == "check":
            f = parse_check(doc, start, text)
            f.slow = slow
            f.para = paragraph_above(lines, start)
            figures.append(f)
            continue
        if i < len(lines) and lines[i].startswith("|"):
            # A Markdown table: its lines down to the next blank line.
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            f = Figure(doc, start + 1, kind, text, fence=(i, j), block=lines[i:j])
            f.slow = slow
            figures.append(f)
            i = j
            continue
        if i == len(lines) or not FENCE.match(lines[i]):
            raise SystemExit(f"{doc}:{start + 1}: a doc-figure marker must sit right above a "
                             "fenced block or a table")
        indent, opening = FENCE.match(lines[i]).groups()
        j = i + 1
        while j < len(lines) and lines[j].strip() != opening:
            j += 1
        if j == len(lines):
            raise SystemExit(f"{doc}:{i + 1}: unclosed fenced block")
        # A block inside a list item is indented: compared without, written back with its indent.
        block = [ln[len(indent):] if ln.startswith(indent) else ln.lstrip()
                 for ln in lines[i + 1 : j]]
        f = Figure(doc, start + 1, kind, text, fence=(i + 1, j), block=block)
        f.indent = indent
        f.slow = slow
        figures.append(f)
        i = j + 1
    return figures


def sections(block):
    """A plain marker's block as (command, shown lines of the command, output lines) parts."""
    parts, k = [], 0
    while k < len(block):
        if not block[k].startswith("$ "):
            raise SystemExit(f"a plain doc-figure block must start with a `$ ` line: {block[k]!r}")
        shown = [block[k]]
        cmd = block[k][2:]
        while cmd.endswith("\\") and k + 1 < len(block):
            k += 1
            shown.append(block[k])
            cmd = cmd + "\n" + block[k]
        k += 1
        out = []
        while k < len(block) and not block[k].startswith("$ "):
            out.append(block[k])
            k += 1
        parts.append((cmd, shown, out))
    return parts


def parse_check(doc, start, text):
    """A doc-figure-check: its command, `in:` row and `PATH = VALUE` lines."""
    parts = text.split("\n")
    # The command runs on until the first `in:` line or `PATH = VALUE` line.
    k = 1
    while k < len(parts) and not re.match(r"^\s*(in:|\S.* = \S+\s*$)", parts[k]):
        k += 1
    command = "\n".join(parts[:k]).strip()
    checks, row = [], None
    for ln in parts[k:]:
        if not ln.strip():
            continue
        if ln.strip().startswith("in:"):
            row = ln.strip()[3:].strip()
            continue
        if " = " not in ln:
            raise SystemExit(f"{doc}:{start + 1}: doc-figure-check line without ' = ': {ln}")
        expr, literal = ln.rsplit(" = ", 1)
        checks.append((expr.strip(), literal.strip()))
    if not command or not checks:
        raise SystemExit(f"{doc}:{start + 1}: doc-figure-check needs a command and figures")
    f = Figure(doc, start + 1, "check", command, checks=checks)
    f.row = row
    return f


def paragraph_above(lines, start):
    """(first, last) of the paragraph or table above line `start`, past blank lines and other
    markers (several markers may follow one table)."""
    last = start
    while last > 0:
        if not lines[last - 1].strip():
            last -= 1
        elif lines[last - 1].rstrip().endswith("-->"):
            while last > 0 and not lines[last - 1].lstrip().startswith("<!--"):
                last -= 1
            last -= 1
        else:
            break
    first = last
    while first > 0 and lines[first - 1].strip() and not lines[first - 1].rstrip().endswith("-->"):
        first -= 1
    return first, last


def json_value(data, expr):
    scale = 1.0
    m = re.match(r"^(.*?)\s*([*/])\s*([\d.e+-]+)$", expr)
    if m and not expr.startswith("/"):
        expr, op, factor = m.group(1), m.group(2), float(m.group(3))
        scale = factor if op == "*" else 1.0 / factor
    node = data
    for key, index, quoted in re.findall(r"\.?([A-Za-z_][\w-]*)|\[(\d+)\]|\[\"([^\"]+)\"\]", expr):
        node = node[int(index)] if index else node[key or quoted]
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        return node, scale
    return node * scale, 1.0


def render(value, literal):
    """`value` written the way `literal` is written (decimals, thousands commas, % sign)."""
    m = NUMBER.match(literal)
    if not m or not isinstance(value, (int, float)):
        return str(value)
    decimals = len(m.group(3) or "")
    text = f"{value:,.{decimals}f}" if "," in m.group(2) else f"{value:.{decimals}f}"
    if m.group(1) == "+" and value >= 0:
        text = "+" + text
    return text + m.group(4)


def occurrences(lines, literal):
    pattern = re.compile(r"(?<![\w.,])" + re.escape(literal) + r"(?![\w]|[.,]\d)")
    return [(k, m) for k, ln in enumerate(lines) for m in pattern.finditer(ln)]
