"""The command line of tools/reference/drake_reference.py."""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time

from . import *  # noqa: F401,F403
from .bootstrap import *  # noqa: F401,F403
from .rotations import *  # noqa: F401,F403
from .scenes import *  # noqa: F401,F403
from .plant import *  # noqa: F401,F403
from .ours import *  # noqa: F401,F403
from .numpy_sap import *  # noqa: F401,F403
from .generate import *  # noqa: F401,F403
from .verify import *  # noqa: F401,F403
from .probe import *  # noqa: F401,F403



def main():
    argv = sys.argv[1:]
    ap = argparse.ArgumentParser(description=sys.modules["__main__"].__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="run the scenes and write the fixtures")
    g.add_argument("--scene", action="append", help="scene name (repeatable); default: all")
    g.add_argument("--out", default=DEFAULT_OUT)
    v = sub.add_parser("verify", help="numpy-SAP replay and physics sanity checks of the fixtures")
    v.add_argument("--out", default=DEFAULT_OUT)
    sub.add_parser("probe", help="one-step experiments on Drake's combination rules and constants")
    sub.add_parser("setup", help="create .venv-drake and install drake only")
    args = ap.parse_args(argv)
    if args.cmd == "setup":
        print(setup_venv())
        return
    ensure_drake(argv)
    import logging
    logging.getLogger("drake").setLevel(logging.ERROR)  # half-space deformable-contact notice
    import warnings
    warnings.filterwarnings("ignore")
    if args.cmd == "generate":
        cmd_generate(args, argv)
    elif args.cmd == "verify":
        cmd_verify(args)
    elif args.cmd == "probe":
        cmd_probe(args)


if __name__ == "__main__":
    main()
