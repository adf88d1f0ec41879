"""KOLO_ settings read the way the C++ core reads them.

Every setting is declared once, in the core's settings table (see
docs/config.md); Python code reads one through ``setting(name)`` instead of
``os.environ``, so it gets the same default, the HOROVOD_ alias and the same
checks (a bad value raises ValueError naming the variable).
"""

import os

from kolo import _core


def setting(name):
    """The value of the KOLO_ setting `name` as text: from the environment
    (or its HOROVOD_ alias), checked, or its default when unset ('' for
    settings without one)."""
    return _core.setting(name)


def forget(*names):
    """Removes variables from this process's environment, so code started
    later (a user's function, its child processes) does not see them."""
    for name in names:
        os.environ.pop(name, None)
