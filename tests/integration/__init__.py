"""Integration tests: the CLIs, vf-eval, the env-server pool, a wheel install and a
headless browser, end to end."""
