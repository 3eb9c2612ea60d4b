"""Trust boundaries: what crosses into the installed build from outside it.

`files`: inputs someone else wrote are read bounded (regular files only, size checked
before a byte is read) and outputs are created without following links. `launch`:
every Python process the project starts runs the installed build and nothing a
directory or an environment variable brings. Both sides use them: the environment
directly, the audit through `redaction_pressure.contract`.
"""
