"""The SIMT machine's instruction decoder, one module per instruction family of the PTX ISA.

Each family module holds ``MAKERS`` (opcode -> maker), filled by its ``@maker(...)`` decorator;
:mod:`helpers.machine.decode` joins them and dispatches. ``operands`` and ``affine`` are what the
families share; besides those a family imports a few public helpers of another: ``integer`` the float
cases of add/mul/mad/div from ``floats``, ``compare`` setp's predicate logic from ``bits``, ``memory``
the callee a st.param names from ``control``.
"""
