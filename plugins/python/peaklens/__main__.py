# SPDX-License-Identifier: Apache-2.0
"""python -m peaklens: the command line of the helper package (record; --help, --version)."""

import sys

from ._record import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
