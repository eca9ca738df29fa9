"""``python -m helpers.exercises list | check NAME FILE | grade NOTEBOOKS... [--csv FILE]``."""
from .grade import main

raise SystemExit(main())
