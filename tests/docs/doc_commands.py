#!/usr/bin/env python3
"""Keeps README.md and docs/*.md true.

  doc_commands.py check SOURCE_DIR
      Every English doc has a Chinese twin (README.md <-> docs/README.zh.md,
      docs/X.md <-> docs/X.zh.md) with the same headings per level, the same
      commands (```sh blocks, comments after '#' aside), the same quoted
      outputs and the same doc-test markers; every relative link resolves,
      anchors included.

  doc_commands.py run SOURCE_DIR SKIFF_BINARY [DOC ...]
      Runs the ```sh blocks of the English docs in order, one scratch directory
      per doc (with build/bin/skiff and the repository's folders linked into
      it, so relative paths work as in a checkout and outputs stay in the
      scratch directory; build/ is the build directory of SKIFF_BINARY), and checks the outputs the docs quote.

Markers: an HTML comment on the line(s) just before a fence.
  <!-- doc-test: skip REASON -->  the block is not run (say why)
  <!-- doc-test: slow -->         long (a training run): skipped, and so is the
                                  rest of its section, unless SKIFF_DOC_TEST_SLOW=1
  <!-- doc-test: exit N -->       the block must exit with N (error examples)
  <!-- doc-test: output -->       the next fence quotes the output of the
                                  previous ```sh block: each line must appear in
                                  it (stdout and stderr), in order; a line '...'
                                  stands for any lines
Each block runs with `bash -e -o pipefail`, a 600 s limit, and the same
environment as this script.
"""

import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

print = functools.partial(print, flush=True)  # progress shows in ctest logs as it happens

MARKER = re.compile(r"<!--\s*doc-test:\s*(\w+)\s*(.*?)\s*-->")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
COMMAND_LANGS = {"sh", "bash", "shell"}


class Block:
    def __init__(self, lang, text, line, markers):
        self.lang = lang
        self.text = text
        self.line = line          # 1-based line of the opening fence
        self.markers = markers    # [(name, argument)]

    def marker(self, name):
        for n, arg in self.markers:
            if n == name:
                return arg
        return None

    @property
    def is_command(self):
        return self.lang in COMMAND_LANGS


class Doc:
    def __init__(self, path):
        self.path = Path(path)
        self.lines = self.path.read_text(encoding="utf-8").splitlines()
        self.blocks = []     # fenced blocks in order
        self.headings = []   # (level, text, line)
        self.sections = []   # for each block: index of the last heading before it (level <= 2)
        self.prose = []      # (line number, text) outside fences
        self._parse()

    def _parse(self):
        pending = []
        fence = None
        section = -1
        for i, line in enumerate(self.lines, 1):
            if fence is not None:
                m = FENCE.match(line)
                if m and m.group(2)[0] == fence[0][0] and len(m.group(2)) >= len(fence[0]) and not m.group(3):
                    self.blocks.append(Block(fence[1], "\n".join(fence[3]), fence[2], fence[4]))
                    self.sections.append(section)
                    fence = None
                else:
                    fence[3].append(line)
                continue
            m = FENCE.match(line)
            if m:
                fence = (m.group(2), m.group(3).lower(), i, [], pending)
                pending = []
                continue
            markers = MARKER.findall(line)
            if markers:
                pending.extend(markers)
                continue
            if line.strip():
                pending = []
            h = HEADING.match(line)
            if h:
                self.headings.append((len(h.group(1)), h.group(2), i))
                if len(h.group(1)) <= 2:
                    section = len(self.headings) - 1
            self.prose.append((i, line))
        if fence is not None:
            raise SystemExit(f"{self.path}:{fence[2]}: unclosed code fence")


def anchors_of(doc):
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to '-'."""
    seen = {}
    out = set()
    for _, text, _ in doc.headings:
        text = re.sub(r"`([^`]*)`", r"\1", text)
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
        slug = "".join(c for c in text.lower() if c.isalnum() or c in " -_")
        slug = slug.replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def strip_comment(line):
    """A command line without its trailing '# comment' (comments get translated)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def command_text(block):
    lines = [strip_comment(l) for l in block.text.splitlines()]
    return "\n".join(l for l in lines if l)


def twin_of(src, en):
    rel = en.relative_to(src)
    if rel == Path("README.md"):
        return src / "docs" / "README.zh.md"
    return en.with_name(en.stem + ".zh.md")


def english_docs(src):
    docs = [src / "README.md"]
    docs += sorted(p for p in (src / "docs").glob("*.md") if not p.name.endswith(".zh.md"))
    return docs


def check(src):
    problems = []
    all_docs = english_docs(src)
    for en_path in list(all_docs):
        zh_path = twin_of(src, en_path)
        rel_en, rel_zh = en_path.relative_to(src), zh_path.relative_to(src)
        if not zh_path.exists():
            problems.append(f"{rel_en}: no Chinese twin {rel_zh}")
            continue
        all_docs.append(zh_path)
        en, zh = Doc(en_path), Doc(zh_path)
        levels_en = [lvl for lvl, _, _ in en.headings]
        levels_zh = [lvl for lvl, _, _ in zh.headings]
        if levels_en != levels_zh:
            problems.append(f"{rel_zh}: headings differ from {rel_en}: levels {levels_zh} vs {levels_en}")
        for kind, pick in (("command block", lambda b: b.is_command),
                           ("quoted output", lambda b: b.marker("output") is not None)):
            a = [command_text(b) if b.is_command else b.text for b in en.blocks if pick(b)]
            b = [command_text(x) if x.is_command else x.text for x in zh.blocks if pick(x)]
            if a != b:
                first = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
                problems.append(
                    f"{rel_zh}: {kind}s differ from {rel_en} ({len(b)} vs {len(a)}; first difference at #{first + 1}: "
                    f"{(b[first] if first < len(b) else '(none)')!r} vs {(a[first] if first < len(a) else '(none)')!r})")
        marks_en = [(b.line, [n for n, _ in b.markers]) for b in en.blocks if b.markers]
        marks_zh = [(b.line, [n for n, _ in b.markers]) for b in zh.blocks if b.markers]
        if [m for _, m in marks_en] != [m for _, m in marks_zh]:
            problems.append(f"{rel_zh}: doc-test markers differ from {rel_en}")
    for path in all_docs:
        doc = Doc(path)
        for line_no, line in doc.prose:
            line = re.sub(r"`[^`]*`", "", line)
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue
                file_part, _, anchor = target.partition("#")
                dest = (path.parent / file_part).resolve() if file_part else path
                where = f"{path.relative_to(src)}:{line_no}"
                if not dest.exists():
                    problems.append(f"{where}: link '{target}': {file_part} does not exist")
                elif anchor and dest.suffix == ".md" and anchor not in anchors_of(Doc(dest)):
                    problems.append(f"{where}: link '{target}': no heading with anchor '#{anchor}' in {dest.name}")
    for p in problems:
        print(f"FAIL {p}")
    print(f"{len(all_docs)} docs checked: {len(problems)} problem(s)")
    return 1 if problems else 0


def scratch_for(src, skiff, name):
    d = Path(tempfile.mkdtemp(prefix=f"skiff-doc-{name}-"))
    # build/ is the build directory of the skiff under test (bench scripts use its other programs).
    os.symlink(Path(skiff).resolve().parent.parent, d / "build")
    for entry in src.iterdir():
        if entry.name.startswith(".") or entry.name in ("build", "data", "output") or entry.name.startswith("build-"):
            continue
        os.symlink(entry, d / entry.name)
    return d


def output_matches(expected, actual):
    """Each expected line appears in `actual`, in order; '...' skips any lines."""
    lines = [l.rstrip() for l in actual.splitlines()]
    pos = 0
    for want in expected.splitlines():
        want = want.rstrip()
        if want.strip() in ("...", "…"):
            continue
        while pos < len(lines) and lines[pos] != want:
            pos += 1
        if pos == len(lines):
            return want
        pos += 1
    return None


def run(src, skiff, only):
    slow = os.environ.get("SKIFF_DOC_TEST_SLOW") == "1"
    docs = [p for p in english_docs(src) if not only or p.name in only or str(p.relative_to(src)) in only]
    ran = skipped = failed = 0
    for path in docs:
        doc = Doc(path)
        rel = path.relative_to(src)
        scratch = None
        last_output = None
        skip_section = None
        for block, section in zip(doc.blocks, doc.sections):
            where = f"{rel}:{block.line}"
            if block.marker("output") is not None:
                if last_output is None:
                    continue  # its command was skipped
                missing = output_matches(block.text, last_output)
                if missing is not None:
                    failed += 1
                    print(f"FAIL {where}: the quoted output line {missing!r} is not in the output:\n{last_output}")
                else:
                    print(f"ok   {where}: quoted output matches")
                continue
            if not block.is_command:
                continue
            last_output = None
            reason = block.marker("skip")
            if reason is None and skip_section is not None and section == skip_section:
                reason = "after a slow block in this section"
            if reason is None and block.marker("slow") is not None and not slow:
                reason = "slow (SKIFF_DOC_TEST_SLOW=1 runs it)"
                skip_section = section
            if reason is not None:
                skipped += 1
                print(f"skip {where}: {reason}")
                continue
            if scratch is None:
                scratch = scratch_for(src, skiff, path.stem.replace(".", "_"))
            want_exit = int(block.marker("exit") or 0)
            try:
                p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=scratch,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600,
                                   stdin=subprocess.DEVNULL)
                out, code = p.stdout.decode("utf-8", "replace"), p.returncode
            except subprocess.TimeoutExpired as e:
                out, code = (e.stdout or b"").decode("utf-8", "replace"), "timeout (600 s)"
            ran += 1
            last_output = out
            if code != want_exit:
                failed += 1
                print(f"FAIL {where}: exit {code}, expected {want_exit}\n$ {block.text}\n{out}")
            else:
                more = " ..." if len(block.text.splitlines()) > 1 else ""
                print(f"ok   {where}: {block.text.splitlines()[0]}{more}")
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"{ran} blocks run, {skipped} skipped, {failed} failed")
    return 1 if failed else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "check":
        return check(Path(argv[1]).resolve())
    if len(argv) >= 3 and argv[0] == "run":
        return run(Path(argv[1]).resolve(), argv[2], set(argv[3:]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
