"""Checks of the Windows installer scripts that run here, without Windows or PowerShell.

Linux CI has no PowerShell, so ``installer/`` is checked with the tree-sitter PowerShell grammar
(PyPI ``tree-sitter-powershell``) and plain byte rules:

- every ``installer/**/*.ps1`` parses with no ERROR or MISSING node, and has no ``"$name:"``
  (a PowerShell parse error the grammar accepts) and no trailing whitespace;
- ``.ps1`` is ASCII or UTF-8 with a BOM (Windows PowerShell 5.1 reads a BOM-less file in the
  ANSI code page: cp932 or cp1252 turn UTF-8 text into mojibake or parse errors);
- ``.cmd`` is ASCII with CRLF line endings only;
- no PowerShell-7-only syntax or command (and none of the 5.1 traps that write a BOM or
  truncate JSON), found on the syntax tree or on code with strings and comments blanked, so
  that a ``??`` inside a message or a comment does not count;
- ``install.ps1``/``uninstall.ps1`` declare ``SupportsShouldProcess``, have comment-based help
  documenting every parameter, and no parameter named ``$Host`` (a read-only automatic
  variable);
- the ``.cmd`` launchers run ``powershell -NoProfile -ExecutionPolicy Bypass -File
  "%~dp0<script>.ps1" %*``, return its exit code, and pause only when started without
  arguments (double-click);
- the ``shell: powershell`` (5.1) steps of ``.github/workflows/windows.yml`` pass the same parse
  and PS7 checks.

House style, to stay clear of the grammar's known false positives (valid PowerShell that it
marks as ERROR): ``switch`` over several lines, native flags as ``--flag value`` (never
``--flag=value``), no backtick-escaped command names, and quoted elements in a command argument
array (``-Severity 'Warning', 'Error'``, not ``-Severity Warning, Error``).

Each checker is a plain function returning findings (``line:col: rule: message``); the tests
at the end run every checker on small bad samples to show it can fail. What needs PowerShell
itself (PSScriptAnalyzer, Pester, a real run) is in ``.github/workflows/windows.yml``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import tree_sitter_powershell
from tree_sitter import Language, Node, Parser, Tree

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALLER = REPO_ROOT / "installer"

BOM = b"\xef\xbb\xbf"
NDL_FORM_URL = "https://form2.ndl.go.jp/form/pub/ndl07/api"

EXPECTED_FILES = (
    "install.ps1",
    "install.cmd",
    "uninstall.ps1",
    "uninstall.cmd",
    "README.txt",
    "tests/Install.Tests.ps1",
)


@dataclass(frozen=True, order=True)
class Finding:
    """One problem at a 1-based line and column (bytes after any BOM, as tree-sitter counts)."""

    line: int
    col: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.line}:{self.col}: {self.rule}: {self.message}"


def _report(path: Path | str, findings: list[Finding]) -> str:
    return f"{path}:\n" + "\n".join(f"  {f}" for f in sorted(findings))


def _position(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    return line, offset - (data.rfind(b"\n", 0, offset) + 1) + 1


# --- tree-sitter ---------------------------------------------------------------------------


@cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_powershell.language()))


def _code(data: bytes) -> bytes:
    """The script without a UTF-8 BOM (the grammar would see the BOM as a stray token)."""
    return data[len(BOM):] if data.startswith(BOM) else data


def parse(data: bytes) -> Tree:
    """The tree-sitter tree of a PowerShell script (BOM stripped)."""
    return _parser().parse(_code(data))


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _at(node: Node, rule: str, message: str) -> Finding:
    return Finding(node.start_point[0] + 1, node.start_point[1] + 1, rule, message)


# --- checkers --------------------------------------------------------------------------------


_AUTOMATIC_PUNCT = {"$_", "$?", "$$", "$^"}


def syntax_errors(data: bytes) -> list[Finding]:
    """Every ERROR and MISSING node of the tree, with where it starts; and one PowerShell parse
    error the grammar misses: ``"$name:"`` in a string (a drive or scope qualifier with no name
    after it, "Variable reference is not valid")."""
    code = _code(data)
    findings = []
    for node in _walk(parse(data).root_node):
        if node.is_error:
            snippet = _text(node).splitlines()[0][:40] if _text(node) else ""
            findings.append(_at(node, "parse-error", f"ERROR node near {snippet!r}"))
        elif node.is_missing:
            findings.append(_at(node, "parse-missing", f"MISSING {node.type!r}"))
        elif node.type == "variable" and code[node.end_byte:node.end_byte + 1] == b":":
            text = _text(node)
            if not text.startswith("${") and ":" not in text and text not in _AUTOMATIC_PUNCT:
                findings.append(_at(node, "parse-variable-colon",
                                    f"{text} followed by ':' (write ${{name}}: or `:)"))
    return findings


def ps1_encoding_problems(data: bytes) -> list[Finding]:
    """A .ps1 must be pure ASCII, or UTF-8 with a BOM (never UTF-16, never BOM-less UTF-8)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return [Finding(1, 1, "encoding", "UTF-16 byte order mark: use ASCII or UTF-8 with BOM")]
    if data.startswith(BOM):
        try:
            data[len(BOM):].decode("utf-8")
        except UnicodeDecodeError as exc:
            line, col = _position(data[len(BOM):], exc.start)  # columns as an editor shows
            return [Finding(line, col, "encoding", "BOM says UTF-8 but the bytes are not UTF-8")]
        return []
    for offset, byte in enumerate(data):
        if byte > 0x7F:
            line, col = _position(data, offset)
            return [Finding(line, col, "encoding", f"non-ASCII byte 0x{byte:02x} in a file "
                            "without a UTF-8 BOM (PowerShell 5.1 would read it as ANSI)")]
    return []


def whitespace_problems(data: bytes) -> list[Finding]:
    """No trailing spaces or tabs (PSScriptAnalyzer's PSAvoidTrailingWhitespace warns, and the
    Windows job fails on warnings)."""
    findings = []
    for match in re.finditer(rb"[ \t]+(?=\r?\n|$)", data):
        line, col = _position(data, match.start())
        findings.append(Finding(line, col, "trailing-whitespace", "spaces or tabs at line end"))
    return findings


def cmd_encoding_problems(data: bytes) -> list[Finding]:
    """A .cmd must be ASCII with CRLF line endings only, the last line terminated too."""
    findings = []
    for offset, byte in enumerate(data):
        if byte > 0x7F:
            line, col = _position(data, offset)
            findings.append(Finding(line, col, "encoding", f"non-ASCII byte 0x{byte:02x}"))
            break
    for match in re.finditer(rb"(?<!\r)\n", data):
        line, col = _position(data, match.start())
        findings.append(Finding(line, col, "line-ending", "bare LF (cmd.exe needs CRLF)"))
    for match in re.finditer(rb"\r(?!\n)", data):
        line, col = _position(data, match.start())
        findings.append(Finding(line, col, "line-ending", "bare CR"))
    if data and not data.endswith(b"\r\n"):
        line, col = _position(data, len(data))
        findings.append(Finding(line, col, "line-ending", "last line has no CRLF"))
    return findings


_STRING_NODES = {
    "string_literal",
    "expandable_string_literal",
    "verbatim_string_characters",
    "expandable_here_string_literal",
    "verbatim_here_string_characters",
}


def code_only(data: bytes) -> bytes:
    """The script with comments blanked to spaces and string contents replaced by ``S``.

    Offsets and line breaks are kept, so a match in the result has the same line and column as
    in the source. Strings become a word character (not spaces) so that ``'a' ? 'b' : 'c'``
    still looks like an expression followed by ``?``.
    """
    code = bytearray(_code(data))
    for node in _walk(parse(data).root_node):
        if node.type == "comment":
            fill = ord(" ")
        elif node.type in _STRING_NODES:
            fill = ord("S")
        else:
            continue
        for i in range(node.start_byte, node.end_byte):
            if code[i] not in (0x0A, 0x0D):
                code[i] = fill
    return bytes(code)


# Token-level PS7-only syntax, matched on code_only() text. Each entry: rule, regex, message.
_PS7_TOKENS: tuple[tuple[str, re.Pattern[bytes], str], ...] = (
    ("ps7-null-coalescing", re.compile(rb"\?\?=?"),
     "?? / ??= (null-coalescing) is PowerShell 7 only"),
    ("ps7-null-conditional", re.compile(rb"\?\.|\}\?\["),
     "?. / ?[] (null-conditional member access) is PowerShell 7 only"),
    ("ps7-pipeline-chain", re.compile(rb"&&|\|\|"),
     "&& / || (pipeline chain operators) are PowerShell 7 only"),
    # An expression, whitespace, '?', whitespace ... whitespace ':' -- the ternary operator.
    # The Where-Object alias '?' follows '|' (or starts a statement), so it does not match.
    ("ps7-ternary", re.compile(rb"(?<=[\w)\]}$'\"])[ \t]+\?[ \t]+(?!\{)[^\n]*?[ \t]:[ \t]"),
     "the ternary operator (a ? b : c) is PowerShell 7 only"),
    ("ps7-clean-block", re.compile(rb"(?i)(?<![\w$-])clean[ \t]*(?:\r?\n[ \t]*)?\{"),
     "clean { } blocks are PowerShell 7.3+ only"),
)

# Commands that do not exist in Windows PowerShell 5.1.
_PS7_COMMANDS = {
    "get-error": "Get-Error is PowerShell 7 only",
    "join-string": "Join-String is PowerShell 6.2+ only",
    "test-json": "Test-Json is PowerShell 6.1+ only",
    "convertfrom-markdown": "ConvertFrom-Markdown is PowerShell 6.1+ only",
    "show-markdown": "Show-Markdown is PowerShell 6.1+ only",
    "get-uptime": "Get-Uptime is PowerShell 6+ only",
    "remove-alias": "Remove-Alias is PowerShell 6+ only",
    "remove-service": "Remove-Service is PowerShell 6+ only",
    "start-threadjob": "Start-ThreadJob is not built into Windows PowerShell 5.1",
    "get-experimentalfeature": "experimental features are PowerShell 6.2+ only",
    "enable-experimentalfeature": "experimental features are PowerShell 6.2+ only",
    "disable-experimentalfeature": "experimental features are PowerShell 6.2+ only",
}

# (command or None for any command, parameter) -> message. Parameters may be abbreviated.
_PS7_PARAMETERS: dict[tuple[str | None, str], str] = {
    (None, "parallel"): "-Parallel (ForEach-Object -Parallel) is PowerShell 7 only",
    (None, "asbytestream"): "-AsByteStream is PowerShell 6+ only (5.1: -Encoding Byte)",
    (None, "skipcertificatecheck"): "-SkipCertificateCheck is PowerShell 6+ only",
    (None, "skiphttperrorcheck"): "-SkipHttpErrorCheck is PowerShell 7 only",
    (None, "statuscodevariable"): "-StatusCodeVariable is PowerShell 7 only",
    ("convertfrom-json", "ashashtable"): "ConvertFrom-Json -AsHashtable is PowerShell 6+ only",
    ("convertfrom-json", "depth"): "ConvertFrom-Json -Depth is PowerShell 6.2+ only",
    ("convertfrom-json", "noenumerate"): "ConvertFrom-Json -NoEnumerate is PowerShell 7 only",
    ("convertto-json", "asarray"): "ConvertTo-Json -AsArray is PowerShell 6.2+ only",
    ("convertto-json", "enumsasstrings"): "ConvertTo-Json -EnumsAsStrings is PowerShell 6.2+ only",
    ("join-path", "additionalchildpath"): "Join-Path -AdditionalChildPath is PowerShell 6+ only",
    ("split-path", "leafbase"): "Split-Path -LeafBase is PowerShell 6+ only",
    ("split-path", "extension"): "Split-Path -Extension is PowerShell 6+ only",
    ("get-date", "asutc"): "Get-Date -AsUTC is PowerShell 7.1+ only",
}

# Automatic variables that do not exist in 5.1 (and throw under Set-StrictMode -Version Latest).
_PS7_VARIABLES = {
    "psstyle": "$PSStyle is PowerShell 7.2+ only",
    "iswindows": "$IsWindows does not exist in 5.1 (StrictMode would throw)",
    "islinux": "$IsLinux does not exist in 5.1 (StrictMode would throw)",
    "ismacos": "$IsMacOS does not exist in 5.1 (StrictMode would throw)",
    "iscoreclr": "$IsCoreCLR does not exist in 5.1 (StrictMode would throw)",
    "psnativecommanduseerroractionpreference": "a PowerShell 7.3+ preference variable",
    "psnativecommandargumentpassing": "a PowerShell 7.3+ preference variable",
}

# Real 5.1 parameters that are prefixes of a 6+ one above (``Split-Path -Leaf`` is not
# an abbreviation of ``-LeafBase``).
_PS51_PARAMETERS = {"leaf", "path", "childpath", "inputobject", "date"}

_PS7_ENCODINGS = {"utf8nobom", "utf8bom"}
_BOM_WRITERS = {"set-content", "add-content", "out-file", "export-csv"}


def _param_name(node: Node) -> str:
    """``-Encoding:`` → ``encoding``."""
    return _text(node).lstrip("-").rstrip(":").lower()


def _matches(given: str, full: str) -> bool:
    """PowerShell accepts any unambiguous prefix of a parameter name; take 3+ letters."""
    return given == full or (len(given) >= 3 and full.startswith(given))


def _unquote(text: str) -> str:
    return text.strip().strip("'\"").lower()


def _command_parts(command: Node) -> tuple[str, list[Node]]:
    """(lower-cased command name, its elements without separators and redirections)."""
    name = ""
    elements: list[Node] = []
    for child in command.children:
        if child.type == "command_name":
            name = _text(child).lower()
        elif child.type == "command_elements":
            elements = [e for e in child.children
                        if e.type not in ("command_argument_sep", "redirection")]
    return name, elements


def _join_path_problem(elements: list[Node]) -> str | None:
    """Join-Path takes one -Path and one -ChildPath in 5.1: more paths need PowerShell 6+."""
    value_params = {"path", "childpath", "additionalchildpath", "credential"}
    paths = 0
    expect_value_for: str | None = None
    for element in elements:
        if element.type == "command_parameter":
            name = _param_name(element)
            full = next((p for p in value_params if _matches(name, p)), None)
            if full is None:
                expect_value_for = None
                continue
            expect_value_for = full
            continue
        if expect_value_for is not None:
            if expect_value_for != "credential":
                paths += 1
            expect_value_for = None
        else:
            paths += 1
    if paths > 2:
        return f"Join-Path with {paths} paths (more than one child path) is PowerShell 6+ only"
    return None


def ps7_only_constructs(data: bytes) -> list[Finding]:
    """PowerShell-7-only syntax, commands, parameters and variables, plus the 5.1 traps
    (``-Encoding UTF8`` writes a BOM; ``ConvertTo-Json`` without ``-Depth`` truncates)."""
    findings: list[Finding] = []
    code = code_only(data)
    for rule, pattern, message in _PS7_TOKENS:
        for match in pattern.finditer(code):
            start = match.start()
            if rule == "ps7-ternary":
                start = match.group(0).index(b"?") + match.start()
            line, col = _position(code, start)
            findings.append(Finding(line, col, rule, message))

    tree = parse(data)
    for node in _walk(tree.root_node):
        if node.type == "comment":
            requires = re.match(r"#requires\s+(.*)", _text(node), re.IGNORECASE)
            if requires and re.search(r"-version\s+([6-9]|\d\d)|-psedition\s+core",
                                      requires.group(1), re.IGNORECASE):
                findings.append(_at(node, "ps7-requires", "#Requires a PowerShell 6+ feature"))
        elif node.type == "variable":
            name = _text(node).lstrip("$").strip("{}").lower().split(":")[-1]
            if name in _PS7_VARIABLES:
                findings.append(_at(node, "ps7-variable", _PS7_VARIABLES[name]))
        elif node.type == "command":
            findings.extend(_command_findings(node))
    return findings


def _command_findings(command: Node) -> list[Finding]:
    findings: list[Finding] = []
    name, elements = _command_parts(command)
    if name in _PS7_COMMANDS:
        findings.append(_at(command, "ps7-command", _PS7_COMMANDS[name]))
    given_params = [_param_name(e) for e in elements if e.type == "command_parameter"]
    for i, element in enumerate(elements):
        if element.type != "command_parameter":
            continue
        param = _param_name(element)
        for (owner, full), message in _PS7_PARAMETERS.items():
            if param in _PS51_PARAMETERS and param != full:
                continue
            if (owner is None or owner == name) and _matches(param, full):
                findings.append(_at(element, "ps7-parameter", message))
        if _matches(param, "encoding") and i + 1 < len(elements):
            value = _unquote(_text(elements[i + 1]))
            if value in _PS7_ENCODINGS:
                findings.append(_at(elements[i + 1], "ps7-encoding",
                                    f"-Encoding {value} is PowerShell 6+ only"))
            elif value == "utf8" and name in _BOM_WRITERS:
                findings.append(_at(elements[i + 1], "ps51-bom-write",
                                    f"{name} -Encoding UTF8 writes a BOM in 5.1 (it breaks "
                                    "Claude Desktop's JSON); let readingroom setup write files"))
    if name == "join-path":
        problem = _join_path_problem(elements)
        if problem:
            findings.append(_at(command, "ps7-join-path", problem))
    if name == "convertto-json" and not any(_matches(p, "depth") for p in given_params):
        findings.append(_at(command, "ps51-json-depth",
                            "ConvertTo-Json without -Depth silently flattens below depth 2"))
    return findings


def _script_param_block(tree: Tree) -> Node | None:
    return next((c for c in tree.root_node.children if c.type == "param_block"), None)


def _script_parameters(param_block: Node) -> list[Node]:
    return [n for n in _walk(param_block) if n.type == "script_parameter"
            and n.parent is not None and n.parent.parent == param_block]


def _parameter_name(parameter: Node) -> str:
    variable = next(c for c in parameter.children if c.type == "variable")
    return _text(variable).lstrip("$").strip("{}")


def reserved_parameter_names(data: bytes) -> list[Finding]:
    """No parameter (of the script or of a function) may be named $Host: it is a read-only
    automatic variable, and -Host would shadow it."""
    findings = []
    for node in _walk(parse(data).root_node):
        if node.type == "script_parameter":
            name = _parameter_name(node)
            if name.lower() in ("host", "input", "args", "psitem", "_", "this", "error"):
                findings.append(_at(node, "reserved-parameter",
                                    f"parameter ${name} shadows an automatic variable"))
    return findings


def should_process_problems(data: bytes) -> list[Finding]:
    """The script's own param block carries [CmdletBinding(SupportsShouldProcess...)]."""
    block = _script_param_block(parse(data))
    if block is None:
        return [Finding(1, 1, "should-process", "no script-level param() block")]
    for attribute in (n for n in _walk(block) if n.type == "attribute"):
        names = [c for c in attribute.children if c.type == "attribute_name"]
        if not names or _text(names[0]).lower() != "cmdletbinding":
            continue
        for argument in (n for n in _walk(attribute) if n.type == "attribute_argument"):
            text = re.sub(r"\s+", "", _text(argument)).lower()
            if text in ("supportsshouldprocess", "supportsshouldprocess=$true"):
                return []
        return [_at(attribute, "should-process",
                    "[CmdletBinding()] without SupportsShouldProcess (no -WhatIf/-Confirm)")]
    return [_at(block, "should-process", "no [CmdletBinding(SupportsShouldProcess)]")]


def help_problems(data: bytes, required: tuple[str, ...] = ()) -> list[Finding]:
    """Comment-based help before the param block: .SYNOPSIS, .DESCRIPTION, .EXAMPLE, a
    .PARAMETER for every declared parameter (and for each name in ``required``)."""
    tree = parse(data)
    block = _script_param_block(tree)
    help_node = None
    for child in tree.root_node.children:
        if child == block:
            break
        if child.type == "comment" and _text(child).startswith("<#") and \
                re.search(r"^\s*\.SYNOPSIS\b", _text(child), re.MULTILINE | re.IGNORECASE):
            help_node = child
    if help_node is None:
        return [Finding(1, 1, "help", "no comment-based help (<# .SYNOPSIS ... #>) before param()")]
    keywords = re.findall(r"^\s*\.([A-Za-z]+)[ \t]*(\S*)", _text(help_node), re.MULTILINE)
    sections = {k.upper() for k, _ in keywords}
    documented = {v.lower() for k, v in keywords if k.upper() == "PARAMETER"}
    findings = [_at(help_node, "help", f"help has no .{s}")
                for s in ("SYNOPSIS", "DESCRIPTION", "EXAMPLE") if s not in sections]
    declared = [_parameter_name(p) for p in _script_parameters(block)] if block else []
    for name in sorted({*declared, *required}, key=str.lower):
        if name.lower() not in documented:
            findings.append(_at(help_node, "help", f"help has no .PARAMETER {name}"))
    for name in sorted(documented - {d.lower() for d in declared}):
        findings.append(_at(help_node, "help", f".PARAMETER {name} documents no parameter"))
    for name in required:
        if name.lower() not in {d.lower() for d in declared}:
            findings.append(Finding(1, 1, "parameters", f"no parameter -{name}"))
    return findings


def cmd_launch_problems(data: bytes, script: str) -> list[Finding]:
    """The .cmd runs ``powershell -NoProfile -ExecutionPolicy Bypass -File "%~dp0<script>" %*``,
    pauses only when started without arguments (a double-click passes none), and returns
    PowerShell's exit code."""
    text = data.decode("ascii", "replace")
    lines = text.splitlines()
    launch = re.compile(r"^\s*@?powershell(?:\.exe)?\s+-NoProfile\s+-ExecutionPolicy\s+Bypass\s+"
                        rf"-File\s+\"%~dp0{re.escape(script)}\"\s+%\*(?=\s|$)", re.IGNORECASE)
    findings = []
    launch_line = next((i for i, line in enumerate(lines, 1) if launch.search(line)), None)
    if launch_line is None:
        findings.append(Finding(1, 1, "cmd-launch", f'no line running powershell -NoProfile '
                                f'-ExecutionPolicy Bypass -File "%~dp0{script}" %*'))
    pause_lines = [i for i, line in enumerate(lines, 1)
                   if re.search(r"(?<![\w-])pause\b", line, re.IGNORECASE)
                   and not re.match(r"\s*@?(rem\b|::)", line, re.IGNORECASE)]
    if not pause_lines:
        findings.append(Finding(1, 1, "cmd-pause", "never pauses: a double-clicked window "
                                "would close before the output can be read"))
    for i in pause_lines:
        if not re.search(r'if\s+"%~1"\s*==\s*""', lines[i - 1], re.IGNORECASE):
            findings.append(Finding(i, 1, "cmd-pause", 'pause not guarded by if "%~1"=="" '
                                    "(it would block scripted runs)"))
    # A bare "exit /b" keeps ERRORLEVEL, yet a caller (cmd /c, PowerShell) may still see 0: the
    # code has to be saved on the line right after the call and returned explicitly.
    if launch_line is not None:
        following = lines[launch_line] if launch_line < len(lines) else ""
        saved = re.match(r'\s*@?set\s+"?(\w+)=%ERRORLEVEL%"?\s*$', following, re.IGNORECASE)
        exit_pattern = rf"^\s*@?exit\s+/b\s+%{saved.group(1) if saved else 'ERRORLEVEL'}%\s*$"
        if saved is None or not re.search(exit_pattern, text, re.IGNORECASE | re.MULTILINE):
            findings.append(Finding(launch_line, 1, "cmd-exit", "PowerShell's exit code is not "
                                    'saved next (set "X=%ERRORLEVEL%") and returned (exit /b %X%)'))
    return findings


@dataclass(frozen=True)
class WorkflowScript:
    """The ``run:`` script of one workflow step, and the workflow line where it starts."""

    step: str
    shell: str | None
    line: int
    script: str


def workflow_scripts(text: str) -> list[WorkflowScript]:
    """Every step's ``run: |`` block of a GitHub Actions workflow (enough YAML for our file)."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if re.match(r"^\s*- \w[\w-]*:", line)]
    scripts = []
    for n, first in enumerate(starts):
        last = starts[n + 1] if n + 1 < len(starts) else len(lines)
        step = lines[first:last]
        name = re.sub(r"^\s*- (name:\s*)?", "", step[0]).strip()
        shell = next((m.group(1) for m in (re.match(r"^\s*shell:\s*(\S+)", x) for x in step)
                      if m), None)
        for k, line in enumerate(step):
            if not re.match(r"^\s*run:\s*\|\s*$", line):
                continue
            body: list[str] = []
            indent = None
            for current in step[k + 1:]:
                if current.strip():
                    width = len(current) - len(current.lstrip())
                    indent = width if indent is None else indent
                    if width < indent:
                        break
                    body.append(current[indent:])
                else:
                    body.append("")
            scripts.append(WorkflowScript(name, shell, first + k + 2,
                                          "\n".join(body).rstrip() + "\n"))
    return scripts


def windows_powershell_problems(workflow: str) -> list[Finding]:
    """Parse errors and PS7-only constructs in the workflow's ``shell: powershell`` (5.1) steps,
    at workflow line numbers."""
    findings = []
    for script in workflow_scripts(workflow):
        if script.shell != "powershell":
            continue
        data = script.script.encode()
        for f in syntax_errors(data) + ps7_only_constructs(data):
            findings.append(Finding(script.line + f.line - 1, f.col, f.rule,
                                    f"{f.message} (step {script.step!r})"))
    return findings


def ps1_files() -> list[Path]:
    return sorted(INSTALLER.rglob("*.ps1"))


def cmd_files() -> list[Path]:
    return sorted(INSTALLER.rglob("*.cmd"))


def _ids(paths: list[Path]) -> list[str]:
    return [p.relative_to(INSTALLER).as_posix() for p in paths]


# --- the real files --------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXPECTED_FILES)
def test_installer_file_present(name: str) -> None:
    assert (INSTALLER / name).is_file(), f"installer/{name} is missing"


@pytest.mark.parametrize("path", ps1_files(), ids=_ids(ps1_files()))
def test_ps1_parses_without_error_nodes(path: Path) -> None:
    findings = syntax_errors(path.read_bytes())
    assert not findings, _report(path, findings)


@pytest.mark.parametrize("path", ps1_files(), ids=_ids(ps1_files()))
def test_ps1_is_ascii_or_utf8_with_bom(path: Path) -> None:
    findings = ps1_encoding_problems(path.read_bytes())
    assert not findings, _report(path, findings)


@pytest.mark.parametrize("path", ps1_files(), ids=_ids(ps1_files()))
def test_ps1_has_no_trailing_whitespace(path: Path) -> None:
    findings = whitespace_problems(path.read_bytes())
    assert not findings, _report(path, findings)


@pytest.mark.parametrize("path", ps1_files(), ids=_ids(ps1_files()))
def test_ps1_uses_nothing_powershell_7_only(path: Path) -> None:
    findings = ps7_only_constructs(path.read_bytes())
    assert not findings, _report(path, findings)


@pytest.mark.parametrize("path", ps1_files(), ids=_ids(ps1_files()))
def test_ps1_has_no_parameter_named_host(path: Path) -> None:
    findings = reserved_parameter_names(path.read_bytes())
    assert not findings, _report(path, findings)


@pytest.mark.parametrize("path", cmd_files(), ids=_ids(cmd_files()))
def test_cmd_is_ascii_with_crlf(path: Path) -> None:
    findings = cmd_encoding_problems(path.read_bytes())
    assert not findings, _report(path, findings)


@pytest.mark.parametrize("name", ["install", "uninstall"])
def test_cmd_launches_its_script_and_pauses_on_double_click(name: str) -> None:
    path = INSTALLER / f"{name}.cmd"
    findings = cmd_launch_problems(path.read_bytes(), f"{name}.ps1")
    assert not findings, _report(path, findings)


def test_readme_txt_is_ascii() -> None:
    data = (INSTALLER / "README.txt").read_bytes()
    assert data.isascii(), "installer/README.txt must be ASCII (Notepad, any code page)"


@pytest.mark.parametrize(
    ("name", "required"),
    [
        ("install.ps1", ("NotificationFiled", "InstallDir", "Hosts", "DataDir", "BundleDir",
                         "NoSelfTest")),
        ("uninstall.ps1", ("InstallDir", "DataDir", "RemoveData")),
    ],
)
def test_script_supports_whatif_and_has_help(name: str, required: tuple[str, ...]) -> None:
    data = (INSTALLER / name).read_bytes()
    findings = should_process_problems(data) + help_problems(data, required)
    assert not findings, _report(name, findings)


WORKFLOW = REPO_ROOT / ".github" / "workflows" / "windows.yml"


def test_workflow_windows_powershell_steps_are_51_safe() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    steps = [s for s in workflow_scripts(text) if s.shell == "powershell"]
    assert len(steps) >= 4, "expected the PSScriptAnalyzer, Pester and install steps under 5.1"
    findings = windows_powershell_problems(text)
    assert not findings, _report(WORKFLOW, findings)


def test_workflow_python_steps_compile() -> None:
    scripts = [s for s in workflow_scripts(WORKFLOW.read_text(encoding="utf-8"))
               if s.shell == "python"]
    assert len(scripts) >= 2, "expected the config checks after install and after uninstall"
    for script in scripts:
        compile(script.script, f"{WORKFLOW}:{script.line} ({script.step})", "exec")


# --- each checker catches what it is for -----------------------------------------------------


def _sample(tmp_path: Path, name: str, content: bytes) -> bytes:
    """Write a bad sample to disk and read it back, as the real checks read real files."""
    path = tmp_path / name
    path.write_bytes(content)
    return path.read_bytes()


@pytest.mark.parametrize(
    ("source", "line", "col"),
    [
        (b"param(\n  [string]$A = 'unterminated\n)\n", None, None),
        (b"$h = @{ a = 1; b = }\nforeach ($x in $y {\n}\n", None, None),
        (b"Write-Host 'ok'\nif ($true) {\n  Write-Host 'no closing brace'\n", None, None),
        (b"$x = $a ? 1 : 2\n", 1, None),
        (b"$a = 1\nWrite-Host \"Refusing $dataPath: not ours\"\n", 2, 22),
        (b"Write-Host \"$a: b\"\n", 1, 13),
    ],
)
def test_syntax_check_reports_broken_scripts(tmp_path: Path, source: bytes, line: int | None,
                                             col: int | None) -> None:
    findings = sorted(syntax_errors(_sample(tmp_path, "bad.ps1", source)))
    assert findings
    assert all(f.rule.startswith("parse-") for f in findings)
    if line is not None:
        assert findings[0].line == line
    if col is not None:
        assert findings[0].col == col
    assert re.fullmatch(r"\d+:\d+: parse-[a-z-]+: .+", str(findings[0]))


def test_syntax_check_accepts_the_house_style(tmp_path: Path) -> None:
    good = (b"[CmdletBinding(SupportsShouldProcess = $true)]\nparam([string]$A)\n"
            b"switch ($A) {\n    'x' { 1 }\n    default { 2 }\n}\n"
            b"& \"$PSScriptRoot\\readingroom.exe\" setup --install-dir $A\n$code = $LASTEXITCODE\n"
            b"Write-Host \"${A}: $env:TEMP $($A): $A`: $_\"\n")
    assert syntax_errors(_sample(tmp_path, "good.ps1", good)) == []


@pytest.mark.parametrize(
    ("content", "where"),
    [
        ("# \u65e5\u672c\u8a9e\nWrite-Host 'x'\n".encode(), (1, 3)),  # UTF-8 without a BOM
        (b"Write-Host '\x94quoted\x94'\n", (1, 13)),  # cp1252 curly quote
        ("Write-Host 'x'\n".encode("utf-16"), (1, 1)),
        (BOM + b"Write-Host '\xff'\n", (1, 13)),  # BOM but not UTF-8
    ],
)
def test_encoding_check_catches_bad_ps1(tmp_path: Path, content: bytes,
                                        where: tuple[int, int]) -> None:
    findings = ps1_encoding_problems(_sample(tmp_path, "bad.ps1", content))
    assert [(f.line, f.col) for f in findings] == [where]


def test_encoding_check_accepts_ascii_and_bom_utf8(tmp_path: Path) -> None:
    assert ps1_encoding_problems(_sample(tmp_path, "a.ps1", b"Write-Host 'x'\r\n")) == []
    bom = BOM + "Write-Host '\u56fd\u7acb\u56fd\u4f1a\u56f3\u66f8\u9928'\n".encode()
    assert ps1_encoding_problems(_sample(tmp_path, "b.ps1", bom)) == []
    assert syntax_errors(bom) == []  # the BOM is not handed to the grammar


def test_whitespace_check_catches_trailing_blanks(tmp_path: Path) -> None:
    data = _sample(tmp_path, "bad.ps1", b"Write-Host 'a'\r\n$x = 1 \r\n$y = 2\t\n$z = 3  ")
    assert [(f.line, f.col) for f in whitespace_problems(data)] == [(2, 7), (3, 7), (4, 7)]
    assert whitespace_problems(b"Write-Host 'a'\r\n\r\n$x = 1\n") == []


@pytest.mark.parametrize(
    ("content", "rule", "line"),
    [
        (b"@echo off\r\npause\n", "line-ending", 2),
        (b"@echo off\npause\r\n", "line-ending", 1),
        (b"@echo off\r\nrem \xe2\x80\x94 dash\r\n", "encoding", 2),
        (b"@echo off\r\npause", "line-ending", 2),
        (b"@echo off\rpause\r\n", "line-ending", 1),
    ],
)
def test_cmd_check_catches_bad_cmd(tmp_path: Path, content: bytes, rule: str,
                                   line: int) -> None:
    findings = cmd_encoding_problems(_sample(tmp_path, "bad.cmd", content))
    assert any(f.rule == rule and f.line == line for f in findings), findings


@pytest.mark.parametrize(
    ("snippet", "rule"),
    [
        (b"$x = $a ? 'yes' : 'no'", "ps7-ternary"),
        (b"$x = ($n -gt 1) ? $n : 1", "ps7-ternary"),
        (b"$x = $a ?? 'default'", "ps7-null-coalescing"),
        (b"$x ??= 'default'", "ps7-null-coalescing"),
        (b"$n = ${a}?.Name", "ps7-null-conditional"),
        (b"$n = ${a}?[0]", "ps7-null-conditional"),
        (b"git status && Write-Host ok", "ps7-pipeline-chain"),
        (b"Test-Thing || exit 1", "ps7-pipeline-chain"),
        (b"function F {\n  process { 1 }\n  clean { 2 }\n}", "ps7-clean-block"),
        (b"1..3 | ForEach-Object -Parallel { $_ }", "ps7-parameter"),
        (b"1..3 | ForEach-Object -Para { $_ }", "ps7-parameter"),
        (b"$c = $t | ConvertFrom-Json -AsHashtable", "ps7-parameter"),
        (b"$c = ConvertFrom-Json -InputObject $t -Depth 10", "ps7-parameter"),
        (b"$c = ConvertTo-Json -InputObject $t -Depth 5 -AsArray", "ps7-parameter"),
        (b"$p = Join-Path $env:LOCALAPPDATA 'Programs' 'ReadingRoom'", "ps7-join-path"),
        (b"$p = Join-Path -Path $a -ChildPath b -AdditionalChildPath c", "ps7-parameter"),
        (b"$p = Join-Path -Path $a -ChildPath 'b' 'c'", "ps7-join-path"),
        (b"Get-Error", "ps7-command"),
        (b"$s = $list | Join-String -Separator ','", "ps7-command"),
        (b"Write-Host \"$($PSStyle.Bold)x\"", "ps7-variable"),
        (b"if ($IsWindows) { 1 }", "ps7-variable"),
        (b"Set-Content -Path $p -Value $v -Encoding utf8NoBOM", "ps7-encoding"),
        (b"Set-Content -Path $p -Value $v -Encoding:utf8NoBOM", "ps7-encoding"),
        (b"Out-File -FilePath $p -InputObject $v -Encoding 'UTF8'", "ps51-bom-write"),
        (b"$j = ConvertTo-Json -InputObject $cfg", "ps51-json-depth"),
        (b"#Requires -Version 7.2\nWrite-Host x", "ps7-requires"),
        (b"$b = Split-Path -Path $p -LeafBase", "ps7-parameter"),
    ],
)
def test_ps7_check_catches_each_construct(tmp_path: Path, snippet: bytes, rule: str) -> None:
    source = b"Write-Host 'first line'\n" + snippet + b"\n"
    findings = ps7_only_constructs(_sample(tmp_path, "bad.ps1", source))
    assert any(f.rule == rule for f in findings), findings
    assert all(f.line >= 2 for f in findings), findings  # located on the snippet, not line 1


def test_ps7_check_reports_line_and_column(tmp_path: Path) -> None:
    source = b"$a = 1\n$b = 2\n$x = $a ?? $b\n"
    findings = ps7_only_constructs(_sample(tmp_path, "bad.ps1", source))
    assert [str(f) for f in findings] == [
        "3:9: ps7-null-coalescing: ?? / ??= (null-coalescing) is PowerShell 7 only"]


def test_ps7_check_ignores_strings_comments_and_51_idioms(tmp_path: Path) -> None:
    source = b"\n".join([
        b"# a comment may say ?? and && and a ? b : c and clean {",
        b"<# so may a block comment: $PSStyle ?. || #>",
        b"Write-Host 'a string may say ?? && || a ? b : c'",
        b'Write-Host "so may $env:X say ?? && Get-Error"',
        b"$h = @\"\nhere ?? && clean {\n\"@",
        b"$files = Get-ChildItem | ? { $_.Length -gt 0 }",
        b"$names = Get-ChildItem | Where-Object Name -Like '*?*'",
        b"if ($?) { Write-Host ok }",
        b"$p = Join-Path -Path $env:LOCALAPPDATA -ChildPath 'Programs\\ReadingRoom'",
        b"$q = Join-Path $a 'b' -Resolve",
        b"$t = [Environment]::GetCommandLineArgs()",
        b"$j = ConvertTo-Json -InputObject $x -Depth 10",
        b"$c = '{}' | ConvertFrom-Json",
        b"Get-Content -LiteralPath $p -Encoding UTF8",
        b"[IO.File]::WriteAllLines($p, [string[]]$lines)",
        b"$g = $groups | Group-Object -Property Name -AsHashTable",
        b"& $exe setup --install-dir $dir 2>&1",
        b"$label = ${env:ProgramFiles(x86)}",
        b"$leaf = Split-Path -Path $p -Leaf",
    ]) + b"\n"
    findings = ps7_only_constructs(_sample(tmp_path, "good.ps1", source))
    assert findings == []


@pytest.mark.parametrize(
    "source",
    [
        b"param([string]$Host)\n",
        b"[CmdletBinding()]\nparam(\n  [string[]]$Hosts,\n  [string]$host\n)\n",
        b"function Register-It {\n  param([string]$Host)\n}\n",
    ],
)
def test_reserved_parameter_check_catches_host(tmp_path: Path, source: bytes) -> None:
    findings = reserved_parameter_names(_sample(tmp_path, "bad.ps1", source))
    assert [f.rule for f in findings] == ["reserved-parameter"]


def test_reserved_parameter_check_allows_hosts(tmp_path: Path) -> None:
    source = b"param([string[]]$Hosts, [string]$HostName)\nWrite-Host $Host.Name\n"
    assert reserved_parameter_names(_sample(tmp_path, "good.ps1", source)) == []


@pytest.mark.parametrize(
    "source",
    [
        b"param([string]$A)\n",
        b"[CmdletBinding()]\nparam([string]$A)\n",
        b"[CmdletBinding(SupportsShouldProcess = $false)]\nparam([string]$A)\n",
        b"Write-Host 'no param block'\n",
    ],
)
def test_should_process_check_catches_missing_whatif(tmp_path: Path, source: bytes) -> None:
    findings = should_process_problems(_sample(tmp_path, "bad.ps1", source))
    assert [f.rule for f in findings] == ["should-process"]


@pytest.mark.parametrize(
    "declaration",
    [b"[CmdletBinding(SupportsShouldProcess)]",
     b"[CmdletBinding(SupportsShouldProcess = $true, ConfirmImpact = 'Medium')]",
     b"[cmdletbinding(ConfirmImpact='High', supportsshouldprocess=$True)]"],
)
def test_should_process_check_accepts_declarations(tmp_path: Path, declaration: bytes) -> None:
    source = declaration + b"\nparam([string]$A)\n"
    assert should_process_problems(_sample(tmp_path, "good.ps1", source)) == []


_GOOD_HELP = b"""<#
.SYNOPSIS
Installs it.
.DESCRIPTION
Longer.
.PARAMETER NotificationFiled
The date.
.PARAMETER Hosts
Which hosts.
.EXAMPLE
.\\install.ps1 -NotificationFiled 2026-08-19
#>
[CmdletBinding(SupportsShouldProcess)]
param([string]$NotificationFiled, [string[]]$Hosts)
"""


def test_help_check_accepts_complete_help(tmp_path: Path) -> None:
    data = _sample(tmp_path, "good.ps1", _GOOD_HELP)
    assert help_problems(data, ("NotificationFiled",)) == []


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ((b".PARAMETER NotificationFiled\nThe date.\n", b""), "no .PARAMETER NotificationFiled"),
        ((b".EXAMPLE\n", b".NOTES\n"), "no .EXAMPLE"),
        ((b".SYNOPSIS\nInstalls it.\n", b""), "no comment-based help"),
        ((b"[string[]]$Hosts", b"[string[]]$Hosts, [switch]$Force"), "no .PARAMETER Force"),
        ((b"param([string]$NotificationFiled, ", b"param("), "no parameter -NotificationFiled"),
    ],
)
def test_help_check_catches_gaps(tmp_path: Path, edit: tuple[bytes, bytes],
                                 expected: str) -> None:
    old, new = edit
    assert old in _GOOD_HELP
    data = _sample(tmp_path, "bad.ps1", _GOOD_HELP.replace(old, new, 1))
    findings = help_problems(data, ("NotificationFiled",))
    assert any(expected in f.message for f in findings), findings


def test_help_check_requires_help_before_param(tmp_path: Path) -> None:
    head, _, tail = _GOOD_HELP.partition(b"#>\n")
    data = _sample(tmp_path, "bad.ps1", tail + head + b"#>\n")
    findings = help_problems(data, ("NotificationFiled",))
    assert any("no comment-based help" in f.message for f in findings), findings


_GOOD_CMD = (b"@echo off\r\nsetlocal\r\n"
             b'powershell.exe -NoProfile -ExecutionPolicy Bypass -File "%~dp0install.ps1" %*\r\n'
             b'set "RR_EXIT=%ERRORLEVEL%"\r\n'
             b'if "%~1"=="" pause\r\n'
             b"exit /b %RR_EXIT%\r\n")


def test_cmd_launch_check_accepts_the_pattern(tmp_path: Path) -> None:
    data = _sample(tmp_path, "install.cmd", _GOOD_CMD)
    assert cmd_launch_problems(data, "install.ps1") == []
    assert cmd_encoding_problems(data) == []


@pytest.mark.parametrize(
    ("edit", "rule"),
    [
        ((b"-NoProfile ", b""), "cmd-launch"),
        ((b"-ExecutionPolicy Bypass ", b""), "cmd-launch"),
        ((b'"%~dp0install.ps1"', b'"install.ps1"'), "cmd-launch"),
        ((b'"%~dp0install.ps1"', b'"%~dp0uninstall.ps1"'), "cmd-launch"),
        ((b" %*\r\n", b" %1\r\n"), "cmd-launch"),
        ((b'if "%~1"=="" pause', b"pause"), "cmd-pause"),
        ((b'if "%~1"=="" pause\r\n', b""), "cmd-pause"),
        ((b"exit /b %RR_EXIT%", b"exit /b"), "cmd-exit"),
        ((b'set "RR_EXIT=%ERRORLEVEL%"\r\n', b""), "cmd-exit"),
        ((b"exit /b %RR_EXIT%", b"exit /b %ERRORLEVEL%"), "cmd-exit"),
        ((b'set "RR_EXIT=%ERRORLEVEL%"\r\n', b'echo done\r\nset "RR_EXIT=%ERRORLEVEL%"\r\n'),
         "cmd-exit"),
    ],
)
def test_cmd_launch_check_catches_bad_launchers(tmp_path: Path, edit: tuple[bytes, bytes],
                                                rule: str) -> None:
    old, new = edit
    assert old in _GOOD_CMD
    data = _sample(tmp_path, "install.cmd", _GOOD_CMD.replace(old, new, 1))
    findings = cmd_launch_problems(data, "install.ps1")
    assert any(f.rule == rule for f in findings), findings


_WORKFLOW_SAMPLE = """\
jobs:
  windows:
    steps:
      - uses: actions/checkout@v4
      - name: fine under 7
        shell: pwsh
        run: |
          $x = $a ?? 'b'
      - name: five-one
        shell: powershell
        run: |
          $ErrorActionPreference = 'Stop'
          $y = $b ?? 'c'
      - name: shell after run
        run: |
          Get-Error
        shell: powershell
      - name: cmd
        shell: cmd
        run: echo a && echo b
"""


def test_workflow_check_catches_ps7_in_a_51_step(tmp_path: Path) -> None:
    text = _sample(tmp_path, "windows.yml", _WORKFLOW_SAMPLE.encode()).decode()
    scripts = workflow_scripts(text)
    assert [(s.step, s.shell) for s in scripts] == [
        ("fine under 7", "pwsh"), ("five-one", "powershell"), ("shell after run", "powershell")]
    findings = windows_powershell_problems(text)
    assert {(f.line, f.rule) for f in findings} == {
        (13, "parse-error"), (13, "ps7-null-coalescing"), (16, "ps7-command")}, findings
