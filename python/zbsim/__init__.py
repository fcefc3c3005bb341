"""zbsim from Python: pipeline-parallel schedules (Zero Bubble and friends).

Every function calls the C++ core that the ``zbsim`` command line calls and returns what the CLI
prints as JSON, as plain dicts and lists: ``compare(p=4, m=8, tf=1, tb=1, tw=1)`` is the
``results`` of ``zbsim compare --p 4 --m 8 --tf 1 --tb 1 --tw 1 --format json``. Problems are
keyword arguments (the flags' names, ``tf`` or ``t_f``) and/or a scenario (a file or a dict).
Bad input raises ValueError with the CLI's message. See python/README.md.
"""

from ._zbsim import (
    __version__,
    actions,
    compare,
    engines,
    evaluate,
    format_schedule,
    format_trace,
    frontier,
    generators,
    parse_schedule,
    problem,
    read_schedule,
    read_trace,
    recommend,
    schedule,
    simulate,
    solve,
    sweep,
    trace_columns,
    write_schedule,
    write_trace,
)

__all__ = [
    "actions",
    "compare",
    "engines",
    "evaluate",
    "format_schedule",
    "format_trace",
    "frontier",
    "generators",
    "parse_schedule",
    "problem",
    "read_schedule",
    "read_trace",
    "recommend",
    "schedule",
    "simulate",
    "solve",
    "sweep",
    "trace_columns",
    "write_schedule",
    "write_trace",
]
