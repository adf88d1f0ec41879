"""KOLO_ settings read the way the C++ core reads them.

Every setting is declared once, in the core's settings table (see
docs/config.md); Python code reads one through ``setting(name)`` instead of
``os.environ``, so it gets the same default, the HOROVOD_ alias and the same
checks (a bad value raises ValueError naming the variable).
"""

import os

from kolo import _core
from kolo.common.exceptions import SettingsError


def setting(name):
    """The value of the KOLO_ setting `name` as text: from the environment
    (or its HOROVOD_ alias), checked, or its default when unset ('' for
    settings without one)."""
    return _core.setting(name)


def check_all():
    """Raises SettingsError naming the first KOLO_ setting in the
    environment that is wrong, alone or against another one."""
    try:
        _core.check_settings()
    except ValueError as bad:
        raise SettingsError(str(bad)) from None


def forget(*names):
    """Removes variables from this process's environment, so code started
    later (a user's function, its child processes) does not see them."""
    for name in names:
        os.environ.pop(name, None)
