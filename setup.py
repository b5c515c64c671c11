"""Package list for setuptools (the rest of the metadata is in pyproject.toml).

The top-level resources/ folder (templates, skills, prompts, themes, tasks) stays where users
and tests type it in a checkout, and is mapped into the wheel as app/resources, so an installed
app reads it through importlib.resources (app/base/paths.py) with no checkout beside it.
"""

from setuptools import find_namespace_packages, setup

RESOURCES = ["app.resources",
             *(f"app.resources.{name}" for name in find_namespace_packages(where="resources"))]

setup(packages=[*find_namespace_packages(include=["app*", "ui*"]), *RESOURCES],
      package_dir={"app.resources": "resources"})
