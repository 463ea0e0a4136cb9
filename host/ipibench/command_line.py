# SPDX-License-Identifier: GPL-2.0-only
"""What every subcommand's argument parser stands on: argparse laid out one
way (Parser) and the usage error of run.sh's own subcommands (UsageError,
exit 2). Each room declares its subcommand's arguments; options.parser()
puts them together into run.sh's one parser."""
import argparse
import re
import textwrap

from ipibench.exit_codes import EX_USAGE

# Help texts are laid out for an 80-column terminal whatever the caller's is.
HELP_WIDTH = 80
PROG = "./run.sh"

class UsageError(Exception):
    """A bad option: exit 2, the message after "run.sh: ", and the help text
    printed first (on stderr) when usage is given."""

    def __init__(self, message, usage=None):
        super().__init__(message)
        self.code, self.message, self.usage = EX_USAGE, message, usage


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written; option help wrapped at
    HELP_WIDTH, never inside a hyphenated word (tcg-single, host-tools.md)."""

    def __init__(self, prog):
        super().__init__(prog, width=HELP_WIDTH, max_help_position=24)

    def _split_lines(self, text, width):
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


class Parser(argparse.ArgumentParser):
    """argparse laid out for HELP_WIDTH, with no abbreviations. With a prefix
    ("matrix: "), a parse error is a UsageError in run.sh's words and -h is
    an option like the others (the reading stops there, see _prepared);
    without one (the readers), argparse's own -h, message and exit 2."""

    def __init__(self, *args, prefix=None, **kw):
        kw.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, add_help=prefix is None, allow_abbrev=False, **kw)
        self.prefix = prefix

    def error(self, message):
        if self.prefix is None:
            super().error(message)
        m = re.match(r"argument (--[\w-]+)(?:/[^:]*)?: expected one argument", message)
        if m:
            raise UsageError(f"{self.prefix}{m.group(1)} needs a value")
        raise UsageError(f"{self.prefix}{message}", self.format_help())
