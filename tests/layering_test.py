#!/usr/bin/env python3
"""One folder, one layer (docs/architecture.md#layers): fails when an #include or a CMake link
goes the wrong way, or when tests/ stops mirroring the folders.

Every source under a library folder may include only files of the folders ALLOWED lists for it,
and each folder's CMake library (declared in the root CMakeLists.txt) may link only the libraries
of those folders. Usage: layering_test.py [REPO_ROOT] (default: this file's parent's parent).
Exit status 0 when everything is in order, 1 with one line per wrong include or link otherwise.
"""
import pathlib
import re
import sys

# The layers, bottom first. A folder may include its own files and those of the folders listed;
# the same table is in docs/architecture.md. models, schedulers and traces are plugins over the
# core and do not include one another.
ALLOWED = {
    "core": {"core"},
    "models": {"core", "models"},
    "schedulers": {"core", "schedulers"},
    "traces": {"core", "traces"},
    "sim": {"core", "models", "schedulers", "traces", "sim"},
    "metrics": {"core", "models", "schedulers", "traces", "sim", "metrics"},
    "sizing": {"core", "models", "schedulers", "traces", "sim", "metrics", "sizing"},
    "report": {"core", "report"},
    "cli": {"core", "models", "schedulers", "traces", "sim", "metrics", "sizing", "report", "cli"},
    # The Python module (docs/python.md): a top layer beside cli, which nothing includes.
    "python": {"core", "models", "schedulers", "traces", "sim", "metrics", "sizing", "python"},
}
# Folders whose library is declared in their own CMakeLists.txt, with sources named relative to
# it (python/ is built only when pybind11 is found); the others' are in the root CMakeLists.txt.
OWN_CMAKE = {"python": "servesim_python"}
SOURCE_SUFFIXES = (".h", ".cpp", ".cpp.in")
# "FOLDER/x.h", and <FOLDER/x.h> for a library folder (so angle brackets cannot hide an include).
INCLUDE = re.compile(
    r'^\s*#\s*include\s+(?:"([^"]+)"|<((?:' + "|".join(ALLOWED) + r')/[^>]+)>)', re.MULTILINE)


def library_folder(lib):
    """servesim_<folder> -> <folder>; None for libraries that are not one folder's."""
    folder = lib[len("servesim_"):] if lib.startswith("servesim_") else None
    return folder if folder in ALLOWED else None


def check_includes(root):
    errors = []
    for folder, allowed in ALLOWED.items():
        for path in sorted((root / folder).rglob("*")):
            if not path.is_file() or not path.name.endswith(SOURCE_SUFFIXES):
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for m in INCLUDE.finditer(text):
                target = m.group(1) or m.group(2)
                top = target.split("/", 1)[0] if "/" in target else ""
                if top not in allowed:
                    line = text.count("\n", 0, m.start()) + 1
                    rel = path.relative_to(root)
                    why = (f"{top}/ is above {folder}/ or beside it" if top in ALLOWED
                           else "not a library folder's file")
                    errors.append(f'{rel}:{line}: #include "{target}": {why} '
                                  f"({folder}/ may include {', '.join(sorted(allowed))})")
    return errors


def cmake_calls(text, command):
    """(first argument, the other arguments) of every command(...) call in `text`."""
    text = re.sub(r"#[^\n]*", "", text)
    for m in re.finditer(rf"\b{command}\s*\(([^)]*)\)", text):
        args = m.group(1).split()
        if args:
            yield args[0], args[1:]


def check_cmake_file(root, rel, prefix):
    """The libraries `rel` declares: (their names, problems). Sources in the root CMakeLists.txt
    are named "FOLDER/x.cpp"; in FOLDER/CMakeLists.txt (prefix "") relative to FOLDER/."""
    errors = []
    text = (root / rel).read_text(encoding="utf-8")
    libraries = {name for command in ("add_library", "pybind11_add_module")
                 for name, _ in cmake_calls(text, command)}
    for command in ("add_library", "pybind11_add_module", "target_sources"):
        for name, args in cmake_calls(text, command):
            folder = library_folder(name)
            if folder is None:
                continue
            for a in args:
                if a in ("PRIVATE", "PUBLIC", "INTERFACE") or a.startswith("${CMAKE_CURRENT_BINARY"):
                    continue
                inside = (a.startswith(folder + "/") if prefix is None
                          else "/" not in a and not a.startswith("$"))
                if not inside:
                    errors.append(f"{rel}: servesim_{folder} compiles {a}, "
                                  f"which is not in {folder}/")
    for name, args in cmake_calls(text, "target_link_libraries"):
        folder = library_folder(name)
        if folder is None:
            continue
        for a in args:
            dep = library_folder(a)
            if a.startswith("servesim_") and (dep is None or dep not in ALLOWED[folder]):
                errors.append(f"{rel}: servesim_{folder} links {a}, which {folder}/ "
                              f"may not use (allowed: {', '.join(sorted(ALLOWED[folder]))})")
    return libraries, errors


def check_cmake(root):
    libraries, errors = check_cmake_file(root, "CMakeLists.txt", None)
    for folder, library in OWN_CMAKE.items():
        rel = f"{folder}/CMakeLists.txt"
        if not (root / rel).is_file():
            errors.append(f"{rel}: missing, so {folder}/ has no library")
            continue
        own, own_errors = check_cmake_file(root, rel, "")
        errors += own_errors
        libraries |= own
        text = (root / "CMakeLists.txt").read_text(encoding="utf-8")
        if not any(args == [folder] for args in
                   ([a] + rest for a, rest in cmake_calls(text, "add_subdirectory"))):
            errors.append(f"CMakeLists.txt: no add_subdirectory({folder})")
    for folder in ALLOWED:
        if f"servesim_{folder}" not in libraries:
            errors.append(f"CMakeLists.txt: no library servesim_{folder} for {folder}/")
    return errors


def check_tests_mirror(root):
    """tests/ mirrors the folders: each library folder, and each of its subfolders holding
    sources (core/kv/), has its tests/ folder, and every tests/ folder holding tests is one of
    those (tests/data/ holds inputs)."""
    errors = []
    sources = set()
    for folder in ALLOWED:
        sources.add(pathlib.Path(folder))
        for path in (root / folder).rglob("*.cpp"):
            sources.add(path.parent.relative_to(root))
    for rel in sorted(sources):
        if not (root / "tests" / rel).is_dir():
            errors.append(f"tests/{rel}/: missing, so {rel}/ has no tests folder of its own")
    tests = root / "tests"
    for path in sorted(tests.rglob("*")):
        rel = path.relative_to(tests)
        if path.is_dir() and rel.parts[0] != "data" and rel not in sources:
            errors.append(f"tests/{rel}/: no source folder {rel}/ to mirror")
    return errors


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[1])
    errors = check_includes(root) + check_cmake(root) + check_tests_mirror(root)
    for e in errors:
        print(e)
    if errors:
        print(f"layering: {len(errors)} problem(s); the layers are in docs/architecture.md")
        return 1
    print(f"layering: every include and link of {len(ALLOWED)} folders goes down; "
          "tests/ mirrors them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
