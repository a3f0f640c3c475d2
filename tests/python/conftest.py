"""pytest setup: the package from python/ and the library `make pylib` built (tests/python/run.sh)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("MUGEN_LIB", os.path.join(ROOT, "build", "libmugen.so"))
os.environ.setdefault("MUGEN_SEARCH_CACHE", "off")
