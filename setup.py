"""Build shim for ``scrapyd-deploy``, which runs ``setup.py bdist_egg`` (and writes its own
setup.py, named "project", when none exists). Everything is declared in pyproject.toml,
including the ``scrapy`` entry point scrapyd reads the settings module from."""

from setuptools import setup

setup()
