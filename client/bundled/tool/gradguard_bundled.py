"""Runs the GradGuard bundled in the VS Code extension on the user's interpreter.

``<python> gradguard_bundled.py serve`` is ``<python> -m gradguard serve`` with the
extension's own copy of GradGuard (``../server``) and of its dependencies first on
``sys.path``, so that installing the extension is all a user does; the interpreter stays
the user's, since the probe runs their code under their torch. The probe's child gets
``../server`` alone on PYTHONPATH (it needs nothing else), so the user's code imports the
user's packages.

The dependencies come as wheels (``../wheels``, made by tools/package_vsix.py), whose
``manifest.json`` lists the ones each CPython version uses; on first use they are unpacked
into ``../libs/<target>-<version>``. A version the package has no wheels for (the
universal package, or a platform the index has no build of a dependency for) gets them
from the interpreter's own pip, into the same folder. ``--version`` prepares the folder
and prints the bundled version once the native parser has loaded; what fails is said on
the last line of stderr, which the extension shows.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

BUNDLED = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER = os.path.join(BUNDLED, "server")
WHEELS = os.path.join(BUNDLED, "wheels")


class CannotPrepare(Exception):
    """The dependencies cannot be made ready for this interpreter; says why in one line."""


def python_version():
    return "{}.{}".format(*sys.version_info[:2])


def manifest():
    with open(os.path.join(WHEELS, "manifest.json"), encoding="utf-8") as file:
        return json.load(file)


def requirements():
    """GradGuard's own requirements (not its extras'), as its metadata declares them."""
    from importlib.metadata import distributions

    [dist] = [d for d in distributions(path=[SERVER]) if d.metadata["Name"] == "gradguard"]
    return [line for line in dist.requires or [] if "extra ==" not in line]


def unpack(wheels, into):
    for name in wheels:
        with zipfile.ZipFile(os.path.join(WHEELS, name)) as archive:
            for member in archive.namelist():
                parts = member.split("/")
                # <name>.data/purelib|platlib/... belongs at the top; other .data parts
                # (scripts, headers) are not needed to import the package.
                if parts[0].endswith(".data"):
                    if len(parts) < 3 or parts[1] not in ("purelib", "platlib"):
                        continue
                    target = os.path.join(into, *parts[2:])
                else:
                    target = os.path.join(into, *parts)
                if member.endswith("/"):
                    continue
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with archive.open(member) as source, open(target, "wb") as out:
                    shutil.copyfileobj(source, out)


def pip_install(into):
    wanted = requirements()
    command = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check",
               "--quiet", "--no-warn-script-location", "--target", into, *wanted]
    try:
        subprocess.run(command, check=True, stdout=sys.stderr)
    except (OSError, subprocess.CalledProcessError) as error:
        raise CannotPrepare(
            "This package of the GradGuard extension carries no build of its dependencies "
            f"for CPython {python_version()} on this platform, and installing them with "
            f"this interpreter's pip failed ({error}); install the extension's package for "
            "this platform, or choose an interpreter with pip and network access") from None


def cache_folders(target, version):
    """Where the dependencies may be kept: beside the wheels, else (an extension folder
    that cannot be written) in the user's cache."""
    name = f"{target}-{version}-{sys.implementation.name}"
    user_cache = (os.environ.get("XDG_CACHE_HOME") or os.environ.get("LOCALAPPDATA")
                  or os.path.expanduser("~/.cache"))
    return [os.path.join(BUNDLED, "libs", name),
            os.path.join(user_cache, "gradguard", "vscode-" + os.path.basename(
                os.path.dirname(BUNDLED)), name)]


def libs_folder():
    """The folder holding the dependencies for this interpreter, made on first use."""
    try:
        wheels = manifest()
    except OSError:
        raise CannotPrepare(f"GradGuard has no bundled dependencies in {BUNDLED} (a "
                            "development build: run npm run package, or use "
                            "importStrategy fromEnvironment)") from None
    version = python_version()
    supported = sorted(wheels["pythons"], key=lambda v: tuple(map(int, v.split("."))))
    if sys.version_info[:2] < tuple(map(int, supported[0].split("."))):
        raise CannotPrepare(f"GradGuard needs Python {supported[0]} or newer; this "
                            f"interpreter is {version}")
    # CPython wheels only; a newer CPython or another implementation uses pip.
    listed = wheels["pythons"].get(version) if sys.implementation.name == "cpython" else None
    errors = []
    for folder in cache_folders(wheels["target"], version):
        if os.path.isdir(folder):
            return folder
        try:
            make(folder, listed)
            return folder
        except OSError as error:
            errors.append(str(error))
    raise CannotPrepare(f"GradGuard cannot unpack its bundled dependencies: {'; '.join(errors)}")


def make(folder, listed):
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    # Made aside and renamed into place: two windows may start a server at once.
    scratch = tempfile.mkdtemp(prefix=".unpacking-", dir=os.path.dirname(folder))
    try:
        if listed is None:
            pip_install(scratch)
        else:
            unpack(listed, scratch)
        try:
            os.rename(scratch, folder)
        except OSError:
            if not os.path.isdir(folder):
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    try:
        libs = libs_folder()
    except CannotPrepare as error:
        sys.stderr.write(f"{error}\n")
        return 1
    sys.path[:0] = [SERVER, libs]
    if sys.argv[1:] == ["--version"]:
        import libcst

        import gradguard

        libcst.parse_module("x = 1\n")  # loads libcst's native parser for this Python
        sys.stdout.write(f"{gradguard.__version__} (bundled)")
        return 0
    from gradguard.cli.main import main as gradguard_main

    return gradguard_main()


if __name__ == "__main__":
    sys.exit(main())
