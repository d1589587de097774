"""Tests of tutorial 3, ``course_utils.lunar``: one file per module."""
