"""Engines other than polars for the audit's row work (SPEC §3 "Problems at scale").

:mod:`evalframe.engines.core` expresses the checks, the retry policies and the counts once in narwhals;
:mod:`evalframe.engines.spark` runs them on Spark. Nothing here is imported on the polars path.
"""
