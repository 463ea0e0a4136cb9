# SPDX-License-Identifier: GPL-2.0-only
"""What every subcommand's argument parser stands on: argparse laid out one
way (Parser) and the usage error of run.sh's own subcommands (UsageError,
exit 2). Each room declares its subcommand's arguments; options.parser()
puts them together into run.sh's one parser."""
import argparse
import difflib
import textwrap

from ipibench.exit_codes import EX_USAGE

# Help texts are laid out for an 80-column terminal whatever the caller's is.
HELP_WIDTH = 80
PROG = "./run.sh"

class UsageError(Exception):
    """A bad option: exit 2, the message after "run.sh: ", and the help text
    printed first (on stderr) when usage is given; hint: a line after it,
    where the help is."""

    def __init__(self, message, usage=None, hint=None):
        super().__init__(message)
        self.code, self.message, self.usage, self.hint = EX_USAGE, message, usage, hint


def help_hint(sub=""):
    """Where a mistaken command line's help is: one line."""
    cmd = f"{PROG} {sub}".strip()
    return f"{cmd} --help lists {'its options' if sub else 'every option'} (docs/cli-reference.md)"


def did_you_mean(word, options):
    """' (did you mean --x?)' for the nearest of options, or ''."""
    near = difflib.get_close_matches(word.partition("=")[0], [o for o in options
                                                              if o.startswith("--")], 1, 0.8)
    return f" (did you mean {near[0]}?)" if near and word.startswith("--") else ""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written; option help wrapped at
    HELP_WIDTH, never inside a hyphenated word (tcg-single, host-tools.md)."""

    def __init__(self, prog):
        super().__init__(prog, width=HELP_WIDTH, max_help_position=24)

    def _split_lines(self, text, width):
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


class Parser(argparse.ArgumentParser):
    """argparse laid out for HELP_WIDTH, with no abbreviations. With a prefix
    ("matrix: "), run.sh's own reading applies (read_options: its messages
    start with the prefix, and -h is an option like the others); without one
    (the readers), argparse reads, with its own -h, message and exit 2."""

    # Options whose value may be empty, or missing at the end (then ""), and
    # options that also take their value as OPTION=VALUE (read_options).
    lenient = frozenset()
    joined = frozenset()

    def __init__(self, *args, prefix=None, **kw):
        kw.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, add_help=prefix is None, allow_abbrev=False, **kw)
        self.prefix = prefix

    def error(self, message):
        """argparse's mistakes in run.sh's voice, as read_options words its
        own: the reason (with a did-you-mean for an unknown option) and
        where the help is, two lines, exit 2; never the whole usage."""
        who = self.prog.replace("./", "", 1)
        words = message.split(": ", 1)
        if words[0] == "unrecognized arguments" and len(words) == 2:
            first = words[1].split()[0]
            message = f"unknown option '{first}'" + \
                did_you_mean(first, list(self._option_string_actions))
        sub = self.prog[len(PROG):].strip()
        self.exit(EX_USAGE, f"{who}: {message}\n{who}: {help_hint(sub)}\n")


def read_options(p, argv, ns, stop_at_dashes=True, unknown_ok=False):
    """Reads argv into ns with p's actions, as run.sh always read its
    arguments: left to right; an option's value is the next argument,
    whatever it looks like, and not an empty one (but for p.lenient); only
    p.joined options take OPTION=VALUE; -h/--help ends the reading (the
    rest is not looked at); with stop_at_dashes, -- ends it too. An unknown
    argument is a UsageError at once, unless unknown_ok (ab hands them on to
    each boot, in order). Messages start with p.prefix. -> (help asked,
    what follows --, the unknown).

    argparse declares the options and writes their help; it does not read
    them, because it would not read them so: it joins abbreviations, drops
    a value of --, refuses a value that starts with '-' and takes
    OPTION=VALUE everywhere."""
    table = p._option_string_actions  # noqa: SLF001 (argparse's index of its options)
    prefix = p.prefix or ""
    unknown, i = [], 0
    while i < len(argv):
        a = argv[i]
        name, eq, value = a.partition("=")
        if a in ("-h", "--help"):
            return True, [], unknown
        if a == "--" and stop_at_dashes:
            return False, list(argv[i + 1:]), unknown
        if eq and name in p.joined:
            action, a = table[name], name
        elif a not in table:
            if not unknown_ok:
                sub = prefix.rstrip(": ")
                raise UsageError(f"{prefix}unknown option '{a}'{did_you_mean(a, table)}",
                                 hint=help_hint(sub))
            unknown.append(a)
            i += 1
            continue
        else:
            action = table[a]
            if action.nargs == 0 or a in p.joined:
                value = action.const
            elif a in p.lenient:
                value = argv[i + 1] if i + 1 < len(argv) else ""
                i += 1
            elif i + 1 < len(argv) and argv[i + 1]:
                value = argv[i + 1]
                i += 1
            else:
                raise UsageError(f"{prefix}{a} needs a value")
        action(p, ns, value, a)
        i += 1
    return False, [], unknown
