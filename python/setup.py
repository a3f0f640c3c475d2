"""Builds libmugen.so with the repository's Makefile (`make pylib`: gcc and libcjson, which
tools/deps.sh installs on Debian) and ships it inside the package (docs/python.md)."""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


class BuildWithLib(build_py):
    def run(self):
        if not os.path.exists(os.path.join(REPO, "Makefile")):
            raise RuntimeError("mugen: install from the repository's python/ folder (pip install ./python), "
                               "which builds libmugen with the Makefile beside it")
        if not os.path.exists("/usr/include/cjson/cJSON.h"):  # the one library libmugen links
            if shutil.which("apt-get") and os.geteuid() == 0:
                subprocess.check_call(["apt-get", "install", "-y", "-qq", "libcjson-dev"])
            else:
                raise RuntimeError("mugen: building libmugen needs libcjson (Debian: apt-get install libcjson-dev)")
        subprocess.check_call(["make", "-j%d" % (os.cpu_count() or 1), "pylib"], cwd=REPO)
        shutil.copy(os.path.join(REPO, "build", "libmugen.so"), os.path.join(HERE, "mugen", "libmugen.so"))
        super().run()


setup(cmdclass={"build_py": BuildWithLib})
