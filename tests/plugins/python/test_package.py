# SPDX-License-Identifier: Apache-2.0
"""The helper as a pip package: plugins/python installed into a scratch virtual environment
(offline: --no-index --no-build-isolation, torch from the environment the tests run in) runs from
there, without PYTHONPATH, with the repository's version."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import torch

from support import HELPER, PYTHON, REPO, clean_environment, read_version


def run(command, **options):
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120, **options)


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.TemporaryDirectory()
        root = cls.scratch.name
        # A copy, its VERSION link included: setuptools builds in the source folder and
        # would leave build/ and peaklens.egg-info in the checkout.
        source = os.path.join(root, "repo", "plugins", "python")
        shutil.copytree(HELPER, source, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info", "_installed.py", "_lib"))
        shutil.copy(os.path.join(REPO, "VERSION"), os.path.join(root, "repo", "VERSION"))
        cls.venv = os.path.join(root, "venv")
        cls.python = os.path.join(cls.venv, "bin", "python")
        # Outside the checkout and without PYTHONPATH, so `peaklens` can only come from the venv.
        cls.environment = clean_environment(PYTHONPATH=None, PIP_CONFIG_FILE=os.devnull, PIP_NO_INPUT="1",
                                            PIP_DISABLE_PIP_VERSION_CHECK="1")
        cls.cwd = root
        created = run([PYTHON, "-m", "venv", "--system-site-packages", "--without-pip", cls.venv], env=cls.environment)
        # Debian's pip refuses to install into the system (PEP 668), not into a venv it is pointed at.
        cls.install = created if created.returncode else run(
            [PYTHON, "-m", "pip", "--python", cls.python, "install", "--no-index", "--no-build-isolation",
             "--no-cache-dir", source], env=cls.environment, cwd=root)
        site_packages = os.path.join(cls.venv, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
        cls.package = os.path.join(site_packages, "peaklens")
        # The training environment's PyTorch: the one the tests run on (a venv of its own).
        if not created.returncode:
            with open(os.path.join(site_packages, "training-torch.pth"), "w", encoding="utf-8") as pth:
                pth.write(os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__))) + "\n")

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def setUp(self):
        self.assertEqual(self.install.returncode, 0, self.install.stdout)

    def venv_python(self, *arguments, **settings):
        environment = dict(self.environment, **settings)
        return run([self.python, *arguments], env=environment, cwd=self.cwd)

    def test_version_is_the_repositorys(self):
        result = self.venv_python("-m", "peaklens", "--version")
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertEqual(result.stdout, "peaklens %s\n" % read_version())

    def test_the_package_imports_from_the_environment(self):
        result = self.venv_python("-c", "import importlib.metadata as m, peaklens; print(peaklens.__file__); "
                                        "print(peaklens.__version__); print(m.version('peaklens')); "
                                        "print(m.requires('peaklens')); print(callable(peaklens.instrument))")
        self.assertEqual(result.returncode, 0, result.stdout)
        location, version, metadata_version, requires, instrument = result.stdout.splitlines()
        self.assertEqual(location, os.path.join(self.package, "__init__.py"))
        self.assertEqual(version, read_version())
        self.assertEqual(metadata_version, read_version())
        self.assertIn("torch", requires)
        self.assertEqual(instrument, "True")
        # The link in the checkout became the file itself.
        version_file = os.path.join(self.package, "VERSION")
        self.assertTrue(os.path.isfile(version_file) and not os.path.islink(version_file))

    def test_record_finds_the_collector_an_install_placed(self):
        """_lib/ (a wheel that carries the collector) before _installed.py (CMake's install),
        both after PEAKLENS_PLUGIN_DIR; without any, an error naming where it looked."""
        collector_dirs = {name: os.path.join(self.cwd, name) for name in ("plugins", "installed")}
        for folder in collector_dirs.values():
            os.makedirs(folder, exist_ok=True)
            open(os.path.join(folder, "libpeaklens_cupti.so"), "w").close()
        lib = os.path.join(self.package, "_lib")
        installed = os.path.join(self.package, "_installed.py")
        find = ("import sys; from peaklens._record import find_collector, RecordError\n"
                "try: print(find_collector())\nexcept RecordError as error: sys.exit(str(error))")
        path = "/usr/bin:/bin"  # no peaklens-cli
        try:
            result = self.venv_python("-c", find, PATH=path)
            self.assertEqual(result.returncode, 1)
            self.assertIn("libpeaklens_cupti.so was not found in $PEAKLENS_PLUGIN_DIR (unset), " + lib, result.stdout)
            self.assertIn("peaklens-cli (not on PATH)", result.stdout)
            with open(installed, "w") as out:
                out.write("COLLECTOR_DIR = %r\n" % os.path.relpath(collector_dirs["installed"], self.package))
            result = self.venv_python("-c", find, PATH=path)
            self.assertEqual(result.stdout, os.path.join(collector_dirs["installed"], "libpeaklens_cupti.so\n"))
            os.makedirs(lib)
            open(os.path.join(lib, "libpeaklens_cupti.so"), "w").close()
            result = self.venv_python("-c", find, PATH=path)
            self.assertEqual(result.stdout, os.path.join(lib, "libpeaklens_cupti.so\n"))
            result = self.venv_python("-c", find, PATH=path, PEAKLENS_PLUGIN_DIR=collector_dirs["plugins"])
            self.assertEqual(result.stdout, os.path.join(collector_dirs["plugins"], "libpeaklens_cupti.so\n"))
        finally:
            shutil.rmtree(lib, ignore_errors=True)
            if os.path.exists(installed):
                os.remove(installed)


if __name__ == "__main__":
    unittest.main()
