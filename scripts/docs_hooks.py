"""MkDocs hooks of gelucheck's documentation site (mkdocs.yml): a page's
``<!-- gelucheck-help: COMMAND -->`` becomes that command's ``--help``, taken from the parser
the command line itself uses - so a command's page never drifts from its options - and
``<!-- gelucheck-signatures -->`` the table of the sentences each defect signature is printed
with (gelucheck/data/signatures.toml)."""
from __future__ import annotations

import argparse
import os
import re

PLACEHOLDER = re.compile(r"<!-- gelucheck-help: ([a-z -]+?) -->")
SIGNATURES = "<!-- gelucheck-signatures -->"


def _parser(words: list[str]) -> argparse.ArgumentParser:
    from gelucheck.cli import build_parser

    parser = build_parser()
    for word in words:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return parser


def on_page_markdown(markdown: str, page, config, files) -> str:
    os.environ["COLUMNS"] = "96"  # argparse wraps to it: the page's code width

    def help_text(match: re.Match) -> str:
        text = _parser(match.group(1).split()).format_help().replace("usage: ", "usage: ", 1)
        return f"```text\n{text.rstrip()}\n```"

    if SIGNATURES in markdown:
        markdown = markdown.replace(SIGNATURES, signature_table())
    return PLACEHOLDER.sub(help_text, markdown)


def signature_table() -> str:
    from gelucheck.signatures import NAMES, sentences

    rows = [f"| `{name}` | {text} |" for name in NAMES
            for text in sentences()[name].values()]
    return "\n".join(["| signature | what gelucheck says |", "|---|---|", *rows])
