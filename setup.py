"""Build the optional C scanners; everything else is in pyproject.toml.

`optional=True`: on a machine without a C compiler the install still
succeeds and dream runs on the pure-Python twins of the scanners (slower on
hundreds of megabytes, same results). See dream/speedups.py.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "dream._speedups",
            ["dream/_speedups.c"],
            optional=True,
            extra_compile_args=["-O2", "-std=c11", "-Wall"],
        )
    ]
)
