"""Compiled pipeline templates (``autosxs.yaml``, ``gecko.yaml``), shipped as package data.

Regenerate them with ``autorater compile``; ``tests/pipelines/test_compiled_templates.py`` fails when they are stale.
"""
