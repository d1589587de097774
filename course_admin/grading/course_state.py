"""The course's code as an answer found it, kept and put back: what ``drive_runner`` holds against
an answer that changes the checks instead of computing what they ask.

An answer cell runs in the same process as the hidden test that drives it (that is how the
hidden test can call it). So an answer could rebind what the check uses: a check module's
global (its clock, a time limit), a method of ``Exercise`` (its record), a function of ``json``
or a builtin. ``snapshot`` keeps, for every loaded ``course_utils`` module and for ``builtins``
and ``json``: the module's names, the attributes of the classes it defines, and the attributes
of the course objects it holds (an ``Exercise``); ``restore`` puts back whatever differs and says
what it was. Standard library only, like the runner.
"""

from __future__ import annotations

import builtins
import json
import sys


def _watched_modules() -> dict[str, object]:
    # besides the course's: json (the runner writes its result line with it) and builtins (every check calls them)
    modules = {name: module for name, module in list(sys.modules.items())
               if module is not None and (name == "course_utils" or name.startswith("course_utils."))}
    return modules | {"builtins": builtins, "json": json}


def _owned(module_name: str, value) -> bool:
    """A class the module defines, or an object of a course class (an ``Exercise``)."""
    if isinstance(value, type):
        return value.__module__ == module_name
    kind = type(value).__module__ or ""
    return kind.startswith("course_utils") and hasattr(value, "__dict__") and not isinstance(value, type(sys))


def snapshot() -> dict:
    """The watched modules' names, and their classes' and course objects' attributes, as they are."""
    state = {}
    for name, module in _watched_modules().items():
        names = dict(vars(module))
        owned = {key: (value, dict(vars(value))) for key, value in names.items() if _owned(name, value)}
        state[name] = (module, names, owned)
    return state


def _put_back(target, before: dict, now: dict, where: str, setter) -> list[str]:
    changed = []
    for key in sorted(set(before) | set(now), key=str):
        if key in before and key in now and now[key] is before[key]:
            continue
        if isinstance(before.get(key, now.get(key)), type(sys)):
            continue  # a submodule imported since: its package gains the name, nothing is changed
        if key.startswith("__") and key.endswith("__") and key not in ("__call__", "__init__", "__new__", "__getattribute__"):
            continue  # interpreter-managed (__doc__ stays, __weakref__...): an answer gains nothing there
        changed.append(f"{where}.{key}")
        try:
            if key in before:
                setter(target, key, before[key])
            else:
                delattr(target, key)
        except (AttributeError, TypeError):
            pass
    return changed


def restore(state: dict, objects: bool = True) -> list[str]:
    """Put every watched name back as ``snapshot`` found it; the dotted names that had changed.
    ``objects=False`` leaves the course objects' attributes alone (the check framework's own
    state, ``checking._DRIVE``, changes while a hidden test runs): modules and classes only."""
    changed = []
    for name, (module, names, owned) in state.items():
        changed += _put_back(module, names, dict(vars(module)), name, setattr)
        for key, (value, attributes) in owned.items():
            if not (objects or isinstance(value, type)):
                continue
            setter = type.__setattr__ if isinstance(value, type) else object.__setattr__
            changed += _put_back(value, attributes, dict(vars(value)), f"{name}.{key}", setter)
    return changed
