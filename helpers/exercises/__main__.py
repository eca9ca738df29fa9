"""``python -m helpers.exercises list | check NAME FILE | grade NOTEBOOKS... [--csv FILE]``."""
from helpers.exercises.grade import main

raise SystemExit(main())
