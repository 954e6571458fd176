"""`pip install .` (docs/python.md#pip): builds the module `servesim` with CMake for the Python
that runs pip, and nothing else.

The build_ext below configures the source tree in build-pip-TAG/ (TAG: the interpreter's ABI and
a hash of its headers, so each Python keeps its own tree and a rebuild only relinks), with
-DPython3_EXECUTABLE=sys.executable so that FindPython3 and pybind11 (Debian's pybind11-dev
CMake config) take that interpreter's headers and module suffix, and builds only the
`servesim_python` target: no executable, no tests, no MPI (the module's sweeps use threads).
build-pip-TAG/ sits beside build/ at the same depth, so with ccache (scripts/ccache.sh's
CCACHE_BASEDIR) the libraries compile from the objects the normal build left. The module is
copied into a setuptools build folder that is emptied first, so a wheel holds this build's
module and nothing older.
"""
import hashlib
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")  # .cpython-311-x86_64-linux-gnu.so
# Every venv of one interpreter shares its headers and suffix, hence its build folder.
_key = "\n".join([sys.version, EXT_SUFFIX, sysconfig.get_paths()["include"]])
BUILD = ROOT / f"build-pip-{sys.implementation.cache_tag}-{hashlib.sha1(_key.encode()).hexdigest()[:8]}"
SETUPTOOLS_BUILD = BUILD / "setuptools"


def version():
    m = re.search(r"project\(servesim VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    if not m:
        sys.exit("setup.py: no `project(servesim VERSION ...)` in CMakeLists.txt")
    return m.group(1)


class CMakeBuild(build_ext):
    def run(self):
        # Nothing from an earlier build may reach the wheel: the folders setuptools copies from.
        for stale in [pathlib.Path(self.build_lib), *SETUPTOOLS_BUILD.glob("bdist.*")]:
            if stale.resolve().is_relative_to(BUILD):
                shutil.rmtree(stale, ignore_errors=True)
        super().run()

    def build_extension(self, ext):
        env = dict(os.environ)
        args = ["-DCMAKE_BUILD_TYPE=Release", "-DSERVESIM_PYTHON=ON", "-DSERVESIM_BUILD_TESTS=OFF",
                "-DSERVESIM_MPI=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
        # SERVESIM_CMAKE_ARGS: more CMake arguments. scripts/test.sh passes its build's
        # -DSERVESIM_WERROR=ON, so that the libraries compile with build/'s flags and come from
        # ccache (with other flags every object missed: the pip test took 100 s instead of 15).
        args += shlex.split(env.get("SERVESIM_CMAKE_ARGS", ""))
        configured = (BUILD / "CMakeCache.txt").is_file()
        generator = ["-G", "Ninja"] if not configured and shutil.which("ninja") else []
        if not env.get("SERVESIM_NO_CCACHE") and shutil.which("ccache"):  # as scripts/ccache.sh
            env["CCACHE_BASEDIR"] = str(ROOT)
            env.setdefault("CCACHE_MAXSIZE", "5G")
            args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        if shutil.which("cmake") is None:
            sys.exit("setup.py: servesim builds with CMake (apt-get install cmake ninja-build)")
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        # Configured with the same arguments before: `cmake --build` reconfigures by itself when
        # a CMakeLists.txt changed, so only a new interpreter or option needs the (slow) step.
        stamp = BUILD / "setup-py-cmake-args.txt"
        if not configured or not stamp.is_file() or stamp.read_text() != "\n".join(args):
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(BUILD), *generator, *args],
                           env=env, check=True)
            stamp.write_text("\n".join(args))
        subprocess.run(["cmake", "--build", str(BUILD), "--target", "servesim_python",
                        "--parallel", jobs], env=env, check=True)
        built = BUILD / "python" / f"servesim{EXT_SUFFIX}"
        if not built.is_file():
            sys.exit(f"setup.py: the build made no {built} (a module for another Python?)")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    version=version(),
    packages=[],  # the source folders are not Python packages: no discovery
    py_modules=[],
    ext_modules=[Extension("servesim", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": str(SETUPTOOLS_BUILD)},
             "egg_info": {"egg_base": str(BUILD)}},
)
