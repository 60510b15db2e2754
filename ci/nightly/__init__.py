"""The nightly report's modules (ci/nightly/report.py is the program)."""
