"""The explorers: one base (base: view function, wiring, message and table boxes, engine label) and
each notebook's explorers (intrinsics, reduce, allreduce), expr (the learner's predicate language),
debug (the lane debugger of any kernel).
Imports everything below it; nothing in helpers imports it.
"""
