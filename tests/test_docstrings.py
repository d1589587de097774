"""The examples in the environments' docstrings (gymnasium style) and in the shared helpers run
as written."""

import doctest
import importlib

import pytest

MODULES = ["course_utils.records", "course_utils.harlow.env", "course_utils.colour.env", "course_utils.lunar.env"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


ENVIRONMENTS = [
    "course_utils.harlow.env:HarlowExperimentEnv",
    "course_utils.colour.env:ColourEnv",
    "course_utils.lunar.env:LanderVectorEnv",
]


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_environment_docstrings_have_gymnasiums_sections(env):
    module, _, name = env.partition(":")
    doc = getattr(importlib.import_module(module), name).__doc__
    for section in ("Action Space", "Observation Space", "Reward", "Start", "Episode End"):
        assert section.lower() in doc.lower(), (env, section)
