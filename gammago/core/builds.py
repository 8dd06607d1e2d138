"""Which code a record names: a `gammago-build` answer (package directory and commit) as a match,
comparison, regression or self-play record keeps it, spelt as the engine's command names its
directory (recorded_build), never by an absolute path nobody gave."""
import os
import re

_NAMED = re.compile(r"(?:^|(?<=[\s;&|('\"]))cd\s+([^\s'\";&|)]+)|PYTHONPATH=['\"]?([^\s'\"]+)")


def named_dirs(command):
    """The directories an engine command line names, in order: [(kind, spelling, real path)],
    kind "cd" for a `cd DIR`, "PYTHONPATH" for each entry of a PYTHONPATH=DIR. A relative
    directory is taken from where the shell would be: the working directory, or the last `cd`
    before it (`cd ../old && exec env PYTHONPATH=. python -m gammago gtp` names ../old twice);
    its spelling is relative to the working directory, as given. Those for the shell to expand
    ($, `) are left out, and so is what a `cd` to one of them makes unknown."""
    out = []
    here_given, here = "", os.getcwd()          # here None: after a cd to an unknown place
    for m in _NAMED.finditer(command):
        kind = "cd" if m.group(1) is not None else "PYTHONPATH"
        for d in ([m.group(1)] if kind == "cd" else m.group(2).split(os.pathsep)):
            if not d:
                continue
            if set("$`") & set(d):
                if kind == "cd":
                    here_given = here = None
                continue
            d_user = os.path.expanduser(d)
            if os.path.isabs(d_user):
                given, real = d, os.path.realpath(d_user)
            elif here is None:
                continue
            else:
                given = os.path.normpath(os.path.join(here_given, d)) if here_given else d
                real = os.path.realpath(os.path.join(here, d_user))
            out.append((kind, given, real))
            if kind == "cd":
                here_given, here = given, real
    return out


def _split_build(build):
    """(package directory, commit) of a `gammago-build` answer ("DIR COMMIT", or "DIR" outside a
    git checkout; the directory is the package's, so it ends in the package's name)."""
    head, sep, tail = build.rpartition(" ")
    if sep and os.sep not in tail:
        return head, tail
    return build, ""


def recorded_build(build, command=""):
    """A `gammago-build` answer as a record keeps it. The engine reports its package directory
    as an absolute path; the record names it as the engine's command does (under a `cd DIR` or
    PYTHONPATH=DIR of the command, spelt as given there: `../build-1b89cff/gammago`), else
    relative to the working directory (`gammago` for the checkout a match is run from), so that
    a record holds no path of the machine that nobody gave. The commit is kept; "" stays ""."""
    if not build:
        return ""
    package, commit = _split_build(build.strip())
    if not os.path.isabs(package):
        return build.strip()
    real = os.path.realpath(package)
    shown = None
    for _, given, d in named_dirs(command):
        if real == d or real.startswith(d + os.sep):
            rest = os.path.relpath(real, d)
            shown = given if rest == "." else os.path.join(given, rest)
            break
    if shown is None:
        shown = os.path.relpath(real)
    return f"{shown} {commit}".strip()
