"""The explorers: one base (base: view function, wiring, message and table boxes, engine label) and
each notebook's explorers (intrinsics, reduce, allreduce), expr (the learner's predicate language),
debug (the lane debugger of any kernel) and simt (its ``%%simt`` cell magic: ``%load_ext helpers.widgets``).
Imports everything below it; only helpers.exercises imports it.
"""


def load_ipython_extension(ipython) -> None:  # noqa: ANN001 - IPython's InteractiveShell
    """``%load_ext helpers.widgets``: register the ``%%simt NAME`` cell magic."""
    from helpers.widgets.simt import register

    register(ipython)
