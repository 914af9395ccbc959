#!/usr/bin/env python3
"""Every option a document shows on a trainplan command line exists.

Reads the command lines in README.md, docs/*.md and examples/**/README.md
(code blocks, and inline code that starts with a program's name) of the
programs built beside BINARY (`trainplan`, `trainplan-train`,
`trainplan-layer-bench`, ...), finds each line's verb (`trainplan llm plan`,
`trainplan samples export`, ...) by asking the program which words are
subcommands, and checks that the verb exists and that every --option on the
line appears in its --help. Quoted strings (a --cmd template: the user's
program's options) and comments are left out; docs/lab/, the research log,
may name options as they were. Prints each option or verb a document names
that the program does not have, with file and line; exits 1 if there is any.
    check-doc-options.py BINARY SOURCE_DIR
"""
import glob, os, re, subprocess, sys

binary, root = sys.argv[1], sys.argv[2]
build_dir = os.path.dirname(os.path.abspath(binary))
programs = {os.path.basename(binary): binary}
for name in ("trainplan-train", "trainplan-layer-bench", "trainplan-gemm-bench", "trainplan-forkrun"):
    path = os.path.join(build_dir, name)
    if os.access(path, os.X_OK):
        programs[name] = path
help_cache = {}


def help_text(program, words):
    key = (program, tuple(words))
    if key not in help_cache:
        r = subprocess.run([programs[program], *words, "--help"], capture_output=True, text=True, timeout=60)
        help_cache[key] = r.stdout + r.stderr if r.returncode == 0 else None
    return help_cache[key]


def verb_of(program, tokens):
    """The longest run of leading bare words that the program takes as (sub)commands."""
    words = []
    for t in tokens:
        if not re.fullmatch(r"[a-z][a-z0-9-]*", t):
            break
        h = help_text(program, words + [t])
        if h is None or h == help_text(program, words):
            break
        words.append(t)
    return words


def command_lines(path):
    """(line number, program, command text) of each program's command line in a markdown file."""
    starts = tuple(p + " " for p in programs)
    out, fenced = [], False
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        line, n = lines[i], i + 1
        if line.lstrip().startswith("```"):
            fenced = not fenced
            i += 1
            continue
        code = fenced or line.startswith("    ")
        text = line.strip()
        if code and text.startswith(starts):
            # A line continued by a backslash, or inside a quoted --cmd template.
            while (text.endswith("\\") or text.count("'") % 2) and i + 1 < len(lines):
                i += 1
                text = text.rstrip("\\") + " " + lines[i].strip()
            out.append((n, text.split()[0], text))
        elif not code:
            for m in re.finditer(r"`((" + "|".join(map(re.escape, programs)) + r") [^`]+)`", line):
                out.append((n, m.group(2), m.group(1)))
        i += 1
    return out


def tokens_and_options(text):
    text = re.sub(r"'[^']*'|\"[^\"]*\"", " ", text)  # the user's program's options
    text = text.split(" #")[0]                         # comments
    return text.split()[1:], re.findall(r"(?<![\w-])(--[a-z0-9][a-z0-9-]*)", text)


files = ([os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))) +
         sorted(glob.glob(os.path.join(root, "examples", "**", "README.md"), recursive=True)))
missing = checked = 0
for path in files:
    for n, program, text in command_lines(path):
        tokens, opts = tokens_and_options(text)
        words = verb_of(program, tokens)
        where = f"{os.path.relpath(path, root)}:{n}"
        if not words and tokens and re.fullmatch(r"[a-z][a-z0-9-]*", tokens[0]) and program == os.path.basename(binary):
            print(f"{where}: {program} has no verb {tokens[0]}")
            missing += 1
            continue
        h = help_text(program, words)
        if h is None:
            continue
        checked += 1
        for o in opts:
            if o != "--help" and not re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])", h):
                print(f"{where}: {' '.join([program] + words)} has no {o}")
                missing += 1
print(f"check-doc-options: {checked} command lines of {len(programs)} programs in {len(files)} documents, "
      f"{missing} option(s) or verb(s) the programs do not have")
sys.exit(1 if missing else 0)
