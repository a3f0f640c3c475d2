"""Builds libmugen.so with the repository's Makefile (`make pylib`: gcc and libcjson, which
tools/deps.sh installs on Debian) and ships it inside the package (docs/python.md)."""
import os
import shutil
import subprocess

from setuptools import Distribution, setup
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


cmdclass = {"build_py": BuildWithLib}
try:  # a wheel (pip wheel ./python) holds libmugen.so: tag it for this platform, any Python 3
    try:
        from setuptools.command.bdist_wheel import bdist_wheel
    except ImportError:
        from wheel.bdist_wheel import bdist_wheel

    class PlatformWheel(bdist_wheel):
        def get_tag(self):  # ctypes: no CPython ABI, one library for every Python 3
            return ("py3", "none", super().get_tag()[2])
    cmdclass["bdist_wheel"] = PlatformWheel
except ImportError:  # no wheel support: pip install still works
    pass


class WithLibrary(Distribution):
    """Not pure Python: it holds libmugen.so, so a wheel puts it with the platform's files
    (platlib), as auditwheel repair needs (tools/wheel.sh)."""

    def has_ext_modules(self):
        return True


setup(cmdclass=cmdclass, distclass=WithLibrary)
