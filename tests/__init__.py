"""The test suite: `unit/` (in process, fast), `integration/` (drives the CLIs, vf-eval,
verifiers' env-server, a wheel install or a browser), `support/` (shared helpers,
imported as ``tests.support.<name>``). Run from the repository root:
``python -m unittest discover -s tests -t .``"""
