"""``python -m audit`` runs the audit command."""

from .cli import main

raise SystemExit(main())
