"""The ``kolorun`` and ``horovodrun`` commands of the pip package: the C++
launcher installed inside the package, started in place of this process."""

import os
import sys


def launcher_path():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "bin", "kolorun")


def main():
    path = launcher_path()
    if not os.access(path, os.X_OK):
        sys.exit(f"kolorun: the launcher binary is missing at {path}; reinstall kolo")
    os.execv(path, [os.path.basename(sys.argv[0])] + sys.argv[1:])


if __name__ == "__main__":
    main()
