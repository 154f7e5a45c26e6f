"""Specifications of the analysis alone, mechanism by mechanism (``INVALID`` cases must
be flagged on exactly their marked lines, ``VALID`` ones not at all): code that is not
yet a rule case, whose files also drive the fixes and the probe. ``tests/test_mechanisms.py``
runs them all."""
